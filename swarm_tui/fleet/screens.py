"""Reading agents' screens: when, and how often.

`%output` is a doorbell: it marks the agent's pane dirty and rings `wake`. Dirty panes are
re-read with `capture-pane` down their host's control channel, one pipelined round per host,
at a capped rate: fast for tiles on screen, slow for the rest (their state still shows in the
sidebar). Nothing is read while nothing changes. After each round the owner re-evaluates the
agents' states; deadlines of states that may change on their own (quiet time) wake the loop
too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.link import HostLink
from swarm_tui.tmux.commands import quote

VISIBLE_INTERVAL = 0.05  # seconds between captures of a tile on screen
HIDDEN_INTERVAL = 1.0  # seconds between captures of an agent off screen
COALESCE = 0.008  # seconds to gather a burst of %output before one round of captures
# off-screen agents read in one round at most: 100 hidden agents falling due together would
# hold the tiles' captures behind them in the channel (a stall every second)
HIDDEN_PER_ROUND = 8


class ScreenReader:
    """Keeps `agents`' screens fresh; `evaluate(now, agents)` is called after each read."""

    def __init__(self, agents: dict[str, Agent], links: dict[str, HostLink],
                 listener: Callable[[], FleetListener],
                 evaluate: Callable[[float, list[Agent] | None], None]):
        self._agents = agents
        self._links = links
        self._listener = listener
        self._evaluate = evaluate
        self._visible: set[str] = set()
        self._dirty: set[str] = set()  # agents with output not yet read (their `dirty`)
        self._planned: float | None = None  # when the loop wakes by itself next (monotonic)
        self.wake = asyncio.Event()

    def set_visible(self, names: set[str]) -> None:
        """Which agents have a tile on screen (they are re-read fast)."""
        newly = names - self._visible
        self._visible = set(names)
        for name in newly:
            if name in self._agents:
                self.mark(self._agents[name])
        self.wake.set()

    def mark(self, agent: Agent) -> None:
        """The agent's screen changed (a doorbell, a new window): read it when due.

        The loop is woken only when this brings its next round forward: an agent already
        dirty is in the plan, and an off-screen one read less than a second ago is due after
        the loop wakes anyway. (128 printing agents ring hundreds of doorbells a second; most
        of them must cost nothing.)"""
        if agent.dirty and agent.name in self._dirty:
            return
        agent.dirty = True
        self._dirty.add(agent.name)
        planned = self._planned
        if planned is None or agent.last_capture + self._interval(agent) < planned:
            self.wake.set()

    def _interval(self, agent: Agent) -> float:
        return VISIBLE_INTERVAL if agent.name in self._visible else HIDDEN_INTERVAL

    async def capture(self, agent: Agent) -> list[str]:
        """Re-read one agent's screen now; returns its plain lines."""
        await self.refresh([agent])
        return agent.plain_screen()

    async def refresh(self, agents: list[Agent]) -> None:
        """Capture agents' panes, one pipelined round per host."""
        by_link: dict[str, list[Agent]] = {}
        for a in agents:
            if a.pane and self._links[a.spec.host].connected:
                by_link.setdefault(a.spec.host, []).append(a)
        await asyncio.gather(*(self._refresh_link(self._links[k], v)
                               for k, v in by_link.items()))

    async def _refresh_link(self, link: HostLink, agents: list[Agent]) -> None:
        control = link.control
        if control is None:
            return
        futures = await control.send([f"capture-pane -p -e -N -t {a.pane}" for a in agents])
        now = time.monotonic()
        continues = []
        for agent, fut in zip(agents, futures, strict=True):
            reply = await fut
            agent.last_capture = now
            agent.dirty = False
            self._dirty.discard(agent.name)
            if not reply.ok:
                continue
            agent.screen = [ln.decode("utf-8", "replace") for ln in reply.lines]
            if agent.adapter.reads_screen:
                agent.tracker.screen(agent.adapter.read(agent.plain_screen()))
            if agent.paused:
                agent.paused = False
                continues.append(f"refresh-client -A {quote(agent.pane + ':continue')}")
            if agent.name in self._visible:
                self._listener().screen_changed(agent)
        if continues:
            await control.send(continues)
        self._evaluate(now, agents)

    async def run(self) -> None:
        """The read loop: wait for a doorbell or a deadline, then one round of captures."""
        timeout: float | None = None
        while True:
            try:  # asyncio.timeout: 3.11's wait_for can swallow a cancel
                async with asyncio.timeout(timeout):
                    await self.wake.wait()
            except TimeoutError:
                pass
            # let a burst of doorbells ring before reading: one round of captures for all
            await asyncio.sleep(COALESCE)
            self.wake.clear()
            now = time.monotonic()
            due = self._due(now)
            if due:
                try:
                    await self.refresh(due)
                except SwarmError:
                    pass  # a link went down; its Exit event says so
            self._evaluate(now, [a for a in self._agents.values()
                                 if (d := a.tracker.next_deadline()) is not None and d <= now])
            timeout = self._next_timeout()
            self._planned = None if timeout is None else time.monotonic() + timeout

    def _dirty_agents(self) -> list[Agent]:
        """The dirty agents with a pane to read (only those: a fleet of 128 where a few print
        is not scanned whole at every doorbell)."""
        found = []
        for name in list(self._dirty):
            agent = self._agents.get(name)
            if agent is None or not agent.dirty:
                self._dirty.discard(name)  # gone, or read meanwhile
            elif agent.pane and (link := self._links.get(agent.spec.host)) is not None \
                    and link.connected:
                found.append(agent)  # (a host that is down: read when it is back)
        return found

    def _due(self, now: float) -> list[Agent]:
        """Every visible agent that is due, and the longest-waiting few hidden ones."""
        due = [a for a in self._dirty_agents() if a.last_capture + self._interval(a) <= now]
        shown = [a for a in due if a.name in self._visible]
        hidden = sorted((a for a in due if a.name not in self._visible),
                        key=lambda a: a.last_capture)
        return shown + hidden[:HIDDEN_PER_ROUND]

    def _next_timeout(self) -> float | None:
        """Seconds until a capture falls due or a state may change on its own; None: never."""
        deadlines = [a.last_capture + self._interval(a) for a in self._dirty_agents()]
        for agent in self._agents.values():
            if (d := agent.tracker.next_deadline()) is not None:
                deadlines.append(d)
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
