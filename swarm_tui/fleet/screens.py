"""Reading agents' screens: when, and how often.

`%output` is a doorbell: it marks the agent's pane dirty and rings `wake`. Dirty panes are
re-read with `capture-pane` down their host's control channel, one pipelined round per host,
at a capped rate: fast for tiles on screen, slow for the rest (their state still shows in the
sidebar). Nothing is read while nothing changes. After each round the owner re-evaluates the
agents' states; deadlines of states that may change on their own (quiet time) wake the loop
too.

An off-screen agent that keeps working is muted: its pane's `%output` is paused for this
client (`refresh-client -A %P:pause`; tmux still reads the pane, the agent runs at full
speed). 128 printing panes cost tmux and the engine more in `%output` than everything else;
a muted one costs one activity report a second (a `window_activity` subscription). It is
read as before (every HIDDEN_BUSY while active), and continued when it comes on screen, when
a hook or a message concerns it, or when tmux's reports say it has gone quiet.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import math
import time
from collections.abc import Callable

from swarm_tui.agents.base import AgentState
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.link import HostLink
from swarm_tui.tmux.commands import quote

VISIBLE_INTERVAL = 0.05  # seconds between captures of a tile on screen
HIDDEN_INTERVAL = 1.0  # seconds between captures of an agent off screen
# an agent off screen that keeps printing is busy (its output says so); its screen matters
# when it stops (a prompt, a question): read it once it has been quiet HIDDEN_SETTLE, and
# at least every HIDDEN_BUSY while it prints
HIDDEN_SETTLE = 0.3
STARTING_FAST = 15.0
HIDDEN_BUSY = 3.0
COALESCE = 0.008  # seconds to gather a burst of %output before one round of captures
# while output keeps coming, rounds start at most this often (a frame at 60 Hz): tmux polls
# every descriptor it holds each time it wakes, so its cost follows the number of rounds,
# not of captures; a doorbell after a quiet spell still waits only COALESCE
ROUND_EVERY = 0.016
# off-screen agents read in one round at most: 100 hidden agents falling due together would
# hold the tiles' captures behind them in the channel (a stall every second)
HIDDEN_PER_ROUND = 8
# seconds the loop waits for a host's round before going on without it: a host whose tmux
# does not answer (stopped, swapping) is left out of later rounds until it does, so the other
# hosts' tiles go on; its channel's own deadline decides when it is down
SLOW_ROUND = 0.25
RESCAN = 0.25  # seconds: every agent's state deadlines are looked at least this often
RESTING = (AgentState.IDLE, AgentState.EXITED, AgentState.UNREACHABLE)
# tmux looks at subscriptions once a second and reports a value that changed; output late in
# the second of one look shows only at the look after next. Two looks with no report: the
# pane has printed nothing for at least QUIET_PROVEN.
MUTED_QUIET = 2.2
QUIET_PROVEN = 1.0


def hidden_due(agent: Agent) -> float:
    """When an off-screen agent with new output is read: a second after its last read, or
    later while it keeps printing, but no later than HIDDEN_BUSY after it. A CLI in its
    first STARTING_FAST seconds is read as a tile is: the fleet is ready when its idle
    prompt is seen, and a second's wait for each would add up to that second."""
    read = agent.last_capture
    tracker = agent.tracker
    if tracker.state is AgentState.STARTING and read - tracker.started < STARTING_FAST:
        return read + VISIBLE_INTERVAL
    return min(
        read + HIDDEN_BUSY, max(read + HIDDEN_INTERVAL, agent.tracker.last_output + HIDDEN_SETTLE)
    )


class Wake(asyncio.Event):
    """The reader's wake-up: `set()` (anyone: something may have changed any agent's state
    or deadlines) re-checks the whole fleet; `ring()` (a doorbell) only reads screens."""

    def __init__(self) -> None:
        super().__init__()
        self.recheck = True

    def set(self) -> None:
        self.recheck = True
        super().set()

    def ring(self) -> None:
        super().set()


class ScreenReader:
    """Keeps `agents`' screens fresh; `evaluate(now, agents)` is called after each read.

    A round costs what it reads, not the fleet's size: 25 tiles printing start a round
    every few milliseconds, while 100 agents off screen print all the time too. Dirty tiles
    are a small set; dirty off-screen agents wait in a heap by when they fall due; the
    agents' own state deadlines (quiet time, settling) are scanned when one falls due, when
    someone calls `wake.set()`, and every RESCAN seconds."""

    def __init__(
        self,
        agents: dict[str, Agent],
        links: dict[str, HostLink],
        listener: Callable[[], FleetListener],
        evaluate: Callable[[float, list[Agent] | None], None],
    ):
        self._agents = agents
        self._links = links
        self._listener = listener
        self._evaluate = evaluate
        self._visible: set[str] = set()
        self._dirty: set[str] = set()  # agents with output not yet read (their `dirty`)
        self._shown_dirty: set[str] = set()  # those of them with a tile
        self._hidden_due: list[tuple[float, str]] = []  # heap: (when due, name), lazily kept
        self._planned: float | None = None  # when the loop wakes by itself next (monotonic)
        self._state_due: float | None = None  # the earliest agent state deadline known
        self._scanned = 0.0  # when every agent's state deadline was last looked at
        self._resting = False  # at the last look every agent was idle, exited or unreachable
        self._muted: set[str] = set()  # agents whose %output is paused (see the module doc)
        # no muted agent can be quiet before this (reports only push their times later): the
        # muted are looked through about once a second, not at every round of captures
        self._muted_next = math.inf
        self._rounds: dict[str, asyncio.Task[None]] = {}  # hosts' rounds not answered yet
        self._late: set[str] = set()  # hosts whose round outlasted SLOW_ROUND
        self._failure: BaseException | None = None  # a round's bug, raised by the loop
        self._runs = 0  # how often the loop was started (more than once: after failures)
        self.wake = Wake()

    def set_visible(self, names: set[str]) -> None:
        """Which agents have a tile on screen (they are re-read fast)."""
        newly, gone = names - self._visible, self._visible - names
        self._visible = set(names)
        self._shown_dirty -= gone
        for name in gone:  # still dirty: wait with the others off screen
            if name in self._dirty and (agent := self._agents.get(name)) is not None:
                heapq.heappush(self._hidden_due, (hidden_due(agent), name))
        for name in newly:
            if (agent := self._agents.get(name)) is not None:
                self.unmute(agent)
                self._dirty.discard(name)  # marked again below, as a tile
                self.mark(agent)
        self.wake.set()

    def mark(self, agent: Agent) -> None:
        """The agent's screen changed (a doorbell, a new window): read it when due.

        The loop is woken only when this brings its next round forward: an agent already
        dirty is in the plan, and an off-screen one read less than a second ago is due after
        the loop wakes anyway. (128 printing agents ring hundreds of doorbells a second; most
        of them must cost nothing.)"""
        name = agent.name
        if agent.dirty and name in self._dirty:
            return
        agent.dirty = True
        self._dirty.add(name)
        if name in self._visible:
            due = agent.last_capture + VISIBLE_INTERVAL
            self._shown_dirty.add(name)
        else:
            due = hidden_due(agent)
            heapq.heappush(self._hidden_due, (due, name))
        planned = self._planned
        if planned is None or due < planned:
            self.wake.ring()

    def activity(self, agent: Agent) -> None:
        """tmux reports the agent's window active in a new second (its subscription). Only a
        muted agent needs it: the others' `%output` says more."""
        if not agent.muted:
            return
        now = time.monotonic()
        agent.activity_at = now
        agent.tracker.output(now)
        agent.last_output_wall = time.time()
        self.mark(agent)

    def mute(self, agent: Agent, now: float) -> None:
        """Count the agent as muted from `now` (its `%output` pause is the caller's to ask):
        tmux's activity reports stand for its output from here."""
        agent.paused, agent.muted = False, True
        agent.tracker.streaming = True
        agent.activity_at = now
        self._muted.add(agent.name)
        self._muted_next = min(self._muted_next, now + MUTED_QUIET)

    def unmute(self, agent: Agent, quiet: bool = False) -> None:
        """Let the agent's `%output` flow again: its next read continues the pane. `quiet`:
        tmux's reports say it has printed nothing for QUIET_PROVEN at least."""
        if not agent.muted:
            return
        agent.muted = False
        agent.tracker.streaming = False
        agent.paused = True  # the read that follows continues it
        self._muted.discard(agent.name)
        if quiet:
            agent.tracker.last_output = max(
                agent.tracker.last_output, time.monotonic() - QUIET_PROVEN
            )
        self.mark(agent)

    def reattached(self, agent: Agent) -> None:
        """The agent's host has a new control client: nothing of it is paused any more."""
        agent.muted = agent.paused = agent.tracker.streaming = False
        self._muted.discard(agent.name)
        self.mark(agent)

    def _mutes(self, agent: Agent, now: float) -> bool:
        """Read off screen, busy for HIDDEN_BUSY and still printing: mute it. (A turn of a
        second or two, or a CLI drawing its banner, is not: its end is seen at once.)"""
        tracker = agent.tracker
        return (
            not agent.muted
            and agent.name not in self._visible
            and tracker.state in (AgentState.WORKING, AgentState.STARTING)
            and now - tracker.since >= HIDDEN_BUSY
            and now - tracker.last_output < HIDDEN_SETTLE
        )

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
        if len(by_link) == 1:  # the usual round: no task and gather for one host
            ((host, some),) = by_link.items()
            await self._refresh_link(self._links[host], some)
            return
        await asyncio.gather(*(self._refresh_link(self._links[k], v) for k, v in by_link.items()))

    async def _refresh_link(self, link: HostLink, agents: list[Agent]) -> None:
        control = link.control
        if control is None:
            return
        # clean from the moment the captures are asked for: a doorbell that rings while
        # they are on their way may be output they miss, and marks the agent again (cleared
        # after the reply, it was lost until the agent's next output)
        for agent in agents:
            agent.dirty = False
            self._dirty.discard(agent.name)
            self._shown_dirty.discard(agent.name)
        try:
            futures = await control.send([f"capture-pane -p -e -N -t {a.pane}" for a in agents])
        except SwarmError:
            for agent in agents:
                self.mark(agent)  # unread: read when the link is back
            raise
        now = time.monotonic()
        continues = []
        for agent, fut in zip(agents, futures, strict=True):
            reply = await fut
            agent.last_capture = now
            if not reply.ok:
                continue
            screen = [ln.decode("utf-8", "replace") for ln in reply.lines]
            changed = screen != agent.screen  # not: a doorbell rung twice for one line
            agent.screen = screen
            if agent.adapter.reads_screen:  # (a tracker made anew needs its first reading)
                agent.tracker.screen(agent.adapter.read(agent.plain_screen()))
            if self._mutes(agent, now):
                self.mute(agent, now)
                continues.append(f"refresh-client -A {quote(agent.pane + ':pause')}")
            elif agent.paused and not agent.muted:
                agent.paused = False
                continues.append(f"refresh-client -A {quote(agent.pane + ':continue')}")
            if changed and agent.name in self._visible:
                self._listener().screen_changed(agent)
        if continues:
            await control.send(continues)
        self._evaluate(now, agents)
        for agent in agents:  # a new reading may have set a deadline (a state to settle)
            self._note_deadline(agent.tracker.next_deadline())

    def _note_deadline(self, deadline: float | None) -> None:
        if deadline is not None and (self._state_due is None or deadline < self._state_due):
            self._state_due = deadline

    async def run(self) -> None:
        """The read loop: wait for a doorbell or a deadline, then one round of captures."""
        try:
            await self._loop()
        finally:  # stopped (or failed): no host's round outlives the loop
            for task in list(self._rounds.values()):
                task.cancel()

    async def _loop(self) -> None:
        # a start after a failure begins afresh: the failed round's agents were taken off
        # the dirty set but never evaluated, and the plan it left (`_planned`) is stale, so
        # doorbells compared with it would not wake the loop (it then slept until a deadline
        # that was never set: every tile frozen)
        timeout: float | None = None
        if self._runs:
            self._failure, self._planned, timeout = None, None, 0.0
            for agent in self._agents.values():
                self.mark(agent)
        self._runs += 1
        started = -math.inf  # when the last round began (monotonic)
        while True:
            try:  # asyncio.timeout: 3.11's wait_for can swallow a cancel
                async with asyncio.timeout(timeout):
                    await self.wake.wait()
            except TimeoutError:
                pass
            # let a burst of doorbells ring before reading: one round of captures for all
            await asyncio.sleep(max(COALESCE, started + ROUND_EVERY - time.monotonic()))
            started = time.monotonic()
            recheck, self.wake.recheck = self.wake.recheck, False
            self.wake.clear()
            now = time.monotonic()
            due = self._due(now)
            if due:
                try:
                    await self._round(due)
                except SwarmError:
                    pass  # a link went down; its Exit event says so
            if self._failure is not None:
                raise self._failure
            state_due = self._state_due
            if (
                recheck
                or now - self._scanned >= RESCAN
                or (state_due is not None and state_due <= now)
            ):
                self._scan_states(now)
            timeout = self._next_timeout()
            self._planned = None if timeout is None else time.monotonic() + timeout

    async def _round(self, due: list[Agent]) -> None:
        """One round of captures. With several hosts each host's round is its own task and
        the loop waits SLOW_ROUND for them at most; one still unanswered keeps its host out
        of later rounds (see `_readable`) until it ends, then rings for them."""
        if len(self._links) == 1:  # one host: nothing else to keep going, no tasks
            await self.refresh(due)
            return
        by_link: dict[str, list[Agent]] = {}
        for agent in due:
            by_link.setdefault(agent.spec.host, []).append(agent)
        tasks = []
        for host, agents in by_link.items():
            task = asyncio.create_task(
                self._refresh_link(self._links[host], agents), name=f"capture-{host}"
            )
            self._rounds[host] = task
            task.add_done_callback(functools.partial(self._round_ended, host))
            tasks.append(task)
        _, slow = await asyncio.wait(tasks, timeout=SLOW_ROUND)
        self._late.update(h for h, t in self._rounds.items() if t in slow)

    def _round_ended(self, host: str, task: asyncio.Task[None]) -> None:
        if self._rounds.get(host) is task:
            del self._rounds[host]
        if not task.cancelled() and not isinstance(task.exception(), SwarmError | None):
            self._failure = task.exception()
            self.wake.ring()
        if host in self._late:  # its agents were left out meanwhile: read them now
            self._late.discard(host)
            self.wake.set()

    def _scan_states(self, now: float) -> None:
        """Evaluate the agents whose state deadline has come; note the next one."""
        self._scanned, self._state_due = now, None
        expired = []
        for agent in self._agents.values():
            if (d := agent.tracker.next_deadline()) is not None:
                if d <= now:
                    expired.append(agent)
                else:
                    self._note_deadline(d)
        self._evaluate(now, expired)
        for agent in expired:  # evaluating may set their next deadline
            d = agent.tracker.next_deadline()
            # one still past after evaluating (a hook's state the screen disagrees with)
            # is looked at again in a while, not in a spin
            self._note_deadline(None if d is None else max(d, now + RESCAN))
        # a fleet with agents at work is looked at now and then even when no deadline is
        # known (a backstop); one where every agent rests sleeps until something happens
        self._resting = all(a.state in RESTING for a in self._agents.values())

    def _readable(self, agent: Agent) -> bool:
        link = self._links.get(agent.spec.host)
        return (
            bool(agent.pane)
            and link is not None
            and link.connected
            and agent.spec.host not in self._rounds
        )

    def _dirty_agents(self) -> list[Agent]:
        """The dirty agents with a pane to read (a host that is down: read when it is back)."""
        found = []
        for name in list(self._dirty):
            agent = self._agents.get(name)
            if agent is None or not agent.dirty:
                self._dirty.discard(name)  # gone, or read meanwhile
            elif self._readable(agent):
                found.append(agent)
        return found

    def _shown(self) -> list[Agent]:
        """The dirty tiles that can be read."""
        found = []
        for name in list(self._shown_dirty):
            agent = self._agents.get(name)
            if agent is None or not agent.dirty or name not in self._visible:
                self._shown_dirty.discard(name)
            elif self._readable(agent):
                found.append(agent)
        return found

    def _hidden_head(self) -> tuple[float, Agent] | None:
        """The off-screen agent that falls due first, dropping stale entries on the way."""
        heap = self._hidden_due
        while heap:
            due, name = heap[0]
            agent = self._agents.get(name)
            if agent is None or not agent.dirty or name not in self._dirty or name in self._visible:
                heapq.heappop(heap)  # read, gone, or now a tile
                continue
            actual = hidden_due(agent)
            if actual > due:  # from before its last read or output: its real turn is later
                heapq.heapreplace(heap, (actual, name))
                continue
            return due, agent
        return None

    def _quieted(self, now: float) -> list[Agent]:
        """Muted agents tmux has not reported active for MUTED_QUIET: unmuted, to be read."""
        if now < self._muted_next:
            return []
        found = []
        self._muted_next = math.inf
        for name in list(self._muted):
            agent = self._agents.get(name)
            if agent is None or not agent.muted:
                self._muted.discard(name)
            elif agent.activity_at + MUTED_QUIET <= now:
                self.unmute(agent, quiet=True)
                if self._readable(agent):
                    found.append(agent)
            else:
                self._muted_next = min(self._muted_next, agent.activity_at + MUTED_QUIET)
        return found

    def _due(self, now: float) -> list[Agent]:
        """Every visible agent that is due, muted ones gone quiet, and the longest-waiting
        few hidden ones."""
        shown = [a for a in self._shown() if a.last_capture + VISIBLE_INTERVAL <= now]
        shown += self._quieted(now)
        hidden: list[Agent] = []
        parked: list[tuple[float, str]] = []
        while len(hidden) < HIDDEN_PER_ROUND and (head := self._hidden_head()) is not None:
            due, agent = head
            if due > now:
                break
            heapq.heappop(self._hidden_due)
            if self._readable(agent):
                hidden.append(agent)
            else:  # its host is down: look again later (its return marks it anyway)
                parked.append((now + HIDDEN_INTERVAL, agent.name))
        for entry in parked:
            heapq.heappush(self._hidden_due, entry)
        return list(dict.fromkeys(shown + hidden))  # a quieted agent may be in both

    def _next_timeout(self) -> float | None:
        """Seconds until a capture falls due or a state may change on its own; None: never."""
        deadlines = [a.last_capture + VISIBLE_INTERVAL for a in self._shown()]
        if self._muted:
            deadlines.append(self._muted_next)
        if (head := self._hidden_head()) is not None:
            deadlines.append(head[0])
        if self._state_due is not None:
            deadlines.append(self._state_due)
        if not self._resting:
            deadlines.append(self._scanned + RESCAN)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())
