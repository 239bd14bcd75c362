"""Agents' windows sized to the tiles that show them, as tmux's own tiled layout does: the CLI
lays its screen out for the room it has, so a tile shows the whole of it. An agent no view
shows goes back to the default size. A window a human is looking at (an attached tmux client,
not swarm's control client) is left to tmux, so the human's terminal decides its size until
they detach. Humans are looked for when tmux says a client attached, detached or changed
windows (`human_moved`), when a window handed over stops waiting for its human, and every
RECHECK seconds besides: never only on an event. (A look every few seconds was up to that
late for a human, and asked every host's tmux about its clients all night.)

Sizes come from the views (the latest view to say an agent's size wins); changes are
debounced, so a terminal being dragged to a new size is one resize per window."""

from __future__ import annotations

import asyncio
import time

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.link import HostLink
from swarm_tui.tmux.commands import quote

DEFAULT = (120, 40)  # a window no view shows (the session's default-size)
UNKNOWN = (0, 0)  # a size no window is: sized again at the next look
DEBOUNCE = 0.3  # seconds of quiet after a change of sizes before windows are resized
RECHECK = 30.0  # seconds between looks for humans tmux said nothing about (a backstop)
# tmux's notices to its control clients that a client came, went or changed windows
HUMAN_MOVES = frozenset({"client-session-changed", "client-detached", "session-window-changed"})
GRACE = 5.0  # seconds a window handed to a human stays theirs before they show up
HUMANS = "list-clients -F '#{client_control_mode} #{window_id}'"


class WindowSizer:
    def __init__(self, agents: dict[str, Agent], links: dict[str, HostLink]):
        self._agents, self._links = agents, links
        self._wanted: dict[str, tuple[int, int]] = {}
        # by (agent, window): a new window is not the one sized; None: left to a human
        self._applied: dict[tuple[str, str], tuple[int, int] | None] = {}
        self._handed: dict[tuple[str, str], float] = {}  # windows handed over: until when
        self.changed = asyncio.Event()

    def want(self, sizes: dict[str, tuple[int, int]]) -> None:
        """The size each shown agent's tile has now; every other agent gets DEFAULT."""
        wanted = {}
        for name, (w, h) in sizes.items():
            if (agent := self._agents.get(name)) is not None:
                least = agent.adapter.min_window  # where its screen is still read right
                wanted[name] = (max(least[0], w), max(least[1], h))
        if wanted != self._wanted:
            self._wanted = wanted
            self.changed.set()

    def size_of(self, name: str) -> tuple[int, int]:
        return self._wanted.get(name, DEFAULT)

    def human_moved(self) -> None:
        """tmux said a client attached, detached or changed windows: look at every host."""
        self.changed.set()

    def _next_look(self) -> float:
        """Seconds until the next look by itself: RECHECK, or sooner when a window handed
        to a human that has not shown up stops waiting for them."""
        now = time.monotonic()
        self._handed = {k: t for k, t in self._handed.items() if t > now}
        return min([RECHECK] + [t - now + 0.05 for t in self._handed.values()])

    async def run(self) -> None:
        while True:
            try:
                async with asyncio.timeout(self._next_look()):
                    await self.changed.wait()
                await asyncio.sleep(DEBOUNCE)  # a drag of the terminal: one resize at its end
            except TimeoutError:
                pass  # look again for humans that came or went
            self.changed.clear()
            for link in list(self._links.values()):
                if link.connected and link.control is not None:
                    try:
                        await self._apply(link)
                    except SwarmError:
                        pass  # the link's own events say what went wrong

    async def _apply(self, link: HostLink) -> None:
        control = link.control
        assert control is not None
        mine = [a for a in self._agents.values() if a.spec.host == link.name and a.window]
        if not mine:
            return
        (reply,) = await control.run_all([HUMANS])  # every look: a human may come or go
        watched = {
            w
            for line in reply.lines
            if (parts := line.decode(errors="replace").split()) and parts[0] == "0"
            for w in parts[1:2]
        }
        commands, resized = [], []
        now = time.monotonic()
        for agent in mine:
            key = (agent.name, agent.window)
            if agent.window in watched:
                self._handed.pop(key, None)  # they came: when they leave, it is the tile's
            if agent.window in watched or now < self._handed.get(key, 0.0):
                if self._applied.get(key, DEFAULT) is not None:
                    commands.append(_to_human(agent.window))
                    self._applied[key] = None  # the human's terminal decides
                continue
            size = self.size_of(agent.name)
            if self._applied.get(key, DEFAULT) != size:
                commands.append(
                    f"resize-window -t {quote(agent.window)} -x {size[0]} -y {size[1]}"
                )  # manual again, the tile's size
                self._applied[key] = size
                agent.resized_at = now  # what it prints next is a redraw (fleet/agent.py)
                resized.append(agent)
        if commands:
            await control.run_all(commands)
            done = time.monotonic()  # (a slow link: the grace counts from tmux's answer too)
            for agent in resized:
                agent.resized_at = done

    def hand_over(self, agent: Agent) -> None:
        """A human is about to attach to the agent's window: from now it follows their
        terminal (the grace covers the moment before their client shows up; after they
        detach it goes back to its tile)."""
        link = self._links.get(agent.spec.host)
        if link is None or link.control is None or not agent.window:
            return
        key = (agent.name, agent.window)
        self._applied[key] = None
        self._handed[key] = time.monotonic() + GRACE
        task = asyncio.ensure_future(link.control.run_all([_to_human(agent.window)]))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # said by the link
        self.changed.set()

    def forget(self, link: HostLink) -> None:
        """A host's tmux came (back): its windows may have any size (it kept the sizes an
        earlier engine gave them), so each is sized again."""
        for agent in self._agents.values():
            if agent.spec.host == link.name:
                self._applied[(agent.name, agent.window)] = UNKNOWN
        self.changed.set()


def _to_human(window: str) -> str:
    """The window follows the terminal of whoever is looking at it (and later resizes)."""
    return f"set-option -w -t {quote(window)} window-size latest"
