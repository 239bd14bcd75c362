"""Which screens a round of captures reads: every tile on screen that is due, and only a few
off-screen agents, the longest-waiting first — a hundred hidden agents falling due together
must not hold the tiles' captures behind them (that was a stall on screen every second)."""

from __future__ import annotations

import time
from pathlib import Path

from swarm_tui.agents import adapter_for
from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import NullListener
from swarm_tui.fleet.screens import (
    HIDDEN_BUSY,
    HIDDEN_INTERVAL,
    HIDDEN_PER_ROUND,
    MUTED_QUIET,
    QUIET_PROVEN,
    ScreenReader,
)
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.testing import async_wait_until


class Link:
    """A host's link, up or down."""

    def __init__(self, connected: bool) -> None:
        self.connected = connected


def _reader(tmp_path: Path, count: int, down: int = 0) -> tuple[ScreenReader, dict[str, Agent]]:
    """`count` agents on the local host, then `down` more on a node whose link is down."""
    path = tmp_path / "rounds.toml"
    path.write_text(
        'name = "rounds"\n[defaults]\ncli = "generic"\ncommand = "true"\n'
        '[hosts.node01]\nssh = "node01"\n'
        + "".join(f'[[agents]]\nname = "A{i:03d}"\n' for i in range(count))
        + "".join(f'[[agents]]\nname = "N{i:03d}"\nhost = "node01"\n' for i in range(down))
    )
    agents = {}
    for i, spec in enumerate(load_layout(path).agents()):
        adapter = adapter_for(spec.cli)
        agents[spec.name] = Agent(
            spec=spec,
            adapter=adapter,
            token="",
            focus="",
            tracker=StateTracker(adapter, started=0.0),
            pane=f"%{i}",
            dirty=False,
            last_capture=float(i),
        )
    links = {"local": Link(True), "node01": Link(False)}
    reader = ScreenReader(agents, links, NullListener, lambda now, agents: None)  # type: ignore[arg-type]
    return reader, agents


def test_a_round_reads_every_due_tile_and_a_few_hidden_agents_oldest_first(tmp_path: Path) -> None:
    reader, agents = _reader(tmp_path, 128)
    shown = {f"A{i:03d}" for i in range(100, 120)}
    reader.set_visible(shown)
    for agent in agents.values():
        reader.mark(agent)  # every agent printed
    due = reader._due(now=1000.0)
    names = [a.name for a in due]
    assert set(names) >= shown
    hidden = [n for n in names if n not in shown]
    assert hidden == [f"A{i:03d}" for i in range(HIDDEN_PER_ROUND)]  # the oldest captures


def test_only_marked_agents_are_read_and_a_read_one_leaves_the_set(tmp_path: Path) -> None:
    reader, agents = _reader(tmp_path, 16)
    assert reader._due(now=1000.0) == []  # nothing printed: nothing to read
    reader.mark(agents["A003"])
    assert [a.name for a in reader._due(now=1000.0)] == ["A003"]
    agents["A003"].dirty = False  # read meanwhile (a capture clears it)
    assert reader._due(now=1000.0) == []
    assert reader._dirty_agents() == []  # and no capture is waited for


def test_agents_of_a_host_that_is_down_do_not_take_the_hidden_slots(tmp_path: Path) -> None:
    """They cannot be read: the hidden agents of the hosts that are up still are."""
    reader, agents = _reader(tmp_path, 12, down=20)
    for agent in agents.values():
        agent.last_capture = 0.0 if agent.spec.host == "node01" else 100.0  # the node's oldest
        reader.mark(agent)
    names = [a.name for a in reader._due(now=1000.0)]
    assert names and all(n.startswith("A") for n in names)


def test_a_doorbell_wakes_the_loop_only_when_it_brings_the_next_round_forward(
    tmp_path: Path,
) -> None:
    """128 printing agents ring hundreds of doorbells a second: one for an agent already
    waiting to be read, or for an off-screen agent not due before the loop wakes anyway,
    must not spin the loop (each spin scans the fleet)."""
    reader, agents = _reader(tmp_path, 4)
    reader.set_visible({"A000"})
    agents["A000"].dirty = False  # its first read (a capture clears it)
    reader.wake.clear()
    reader._planned = 50.0  # the loop plans to wake at t=50 by itself
    hidden = agents["A001"]
    hidden.last_capture = 49.5  # due at 50.5: after the planned wake
    reader.mark(hidden)
    assert hidden.dirty and not reader.wake.is_set()
    assert [a.name for a in reader._due(now=50.6)] == ["A001"]  # still read when due
    early = agents["A002"]
    early.last_capture = 10.0  # due long ago: the loop must come now
    reader.mark(early)
    assert reader.wake.is_set()
    reader.wake.clear()
    reader.mark(early)  # rings again before it was read: already in the plan
    assert not reader.wake.is_set()
    shown = agents["A000"]
    shown.last_capture = 49.0  # a tile, due at 49.05: before the planned wake
    reader.mark(shown)
    assert reader.wake.is_set()
    reader._planned = None  # the loop sleeps with no deadline: every new doorbell wakes it
    reader.wake.clear()
    reader.mark(agents["A003"])
    assert reader.wake.is_set()


def test_an_agent_off_screen_is_read_when_it_goes_quiet_and_now_and_then_while_it_prints(
    tmp_path: Path,
) -> None:
    """Off screen, output says "busy": its screen matters when it stops (a prompt, a
    question). One that keeps printing is read every HIDDEN_BUSY seconds, not every second;
    one that stopped is read HIDDEN_SETTLE after its last output (never twice a second)."""
    reader, agents = _reader(tmp_path, 2)
    reader.set_visible(set())
    printer, quiet = agents["A000"], agents["A001"]
    for agent in (printer, quiet):
        agent.last_capture = 100.0
        agent.dirty = False
    for step in range(1, int(HIDDEN_BUSY * 5)):  # A000 prints 5 lines a second, A001 one
        t = 100.0 + step / 5
        printer.tracker.output(t)
        reader.mark(printer)
        if t < 100.3:
            quiet.tracker.output(t)
            reader.mark(quiet)
        due = [a.name for a in reader._due(now=t)]
        if t < 100.0 + HIDDEN_INTERVAL:
            assert due == [], (t, due)
        else:
            assert "A000" not in due, (t, due)  # still printing: not yet
        if "A001" in due:
            quiet.dirty, quiet.last_capture = False, t
            assert t >= 100.0 + HIDDEN_INTERVAL
    assert quiet.last_capture == 100.0 + 5 / 5  # a second after its last read
    assert [a.name for a in reader._due(now=100.0 + HIDDEN_BUSY)] == ["A000"]


def _working(agent: Agent, now: float, since: float) -> None:
    agent.tracker.state, agent.tracker.since = AgentState.WORKING, since
    agent.tracker.output(now)


def test_a_busy_agent_off_screen_is_muted_and_a_tile_or_a_quiet_one_is_not(tmp_path: Path) -> None:
    reader, agents = _reader(tmp_path, 4)
    reader.set_visible({"A002"})
    now = time.monotonic()
    busy, rested, tile, short = (agents[f"A00{i}"] for i in range(4))
    for agent in (busy, tile):
        _working(agent, now - 0.1, since=now - HIDDEN_BUSY)
    _working(rested, now - 1.0, since=now - 5)  # its last line was a second ago: settling
    _working(short, now - 0.1, since=now - 1)  # working for a second: may end any moment
    assert reader._mutes(busy, now)
    assert not reader._mutes(rested, now)
    assert not reader._mutes(tile, now)
    assert not reader._mutes(short, now)
    agents["A003"].tracker.state = AgentState.IDLE
    assert not reader._mutes(short, now + 5)
    busy.muted = True
    assert not reader._mutes(busy, now)  # once


def test_a_muted_agent_counts_as_printing_until_tmux_stops_reporting_it(tmp_path: Path) -> None:
    """Its output is known once a second: the gap between two reports (longer than a quick
    CLI's quiet time) must not read as "idle"; two of tmux's looks with no report do."""
    reader, agents = _reader(tmp_path, 1)
    reader.set_visible(set())
    agent = agents["A000"]
    now = time.monotonic()
    agent.tracker.quiet_needed = 0.5  # quicker than tmux's reports
    agent.tracker.state = AgentState.WORKING
    reader.mute(agent, now)
    reader.activity(agent)  # a report: output in a new second
    assert agent.tracker.last_output >= now and agent.dirty
    assert reader._quieted(time.monotonic()) == []  # not looked through at every round
    # again, muted and last reported a while ago
    reader.unmute(agent)
    agent.dirty, agent.tracker.state = False, AgentState.WORKING
    earlier = time.monotonic() - (MUTED_QUIET - 0.1)
    reader.mute(agent, earlier)
    agent.tracker.last_output = earlier
    now = time.monotonic()
    assert not agent.tracker.evaluate(now)  # no report for 2 s: still working
    assert agent.state is AgentState.WORKING and agent.tracker.next_deadline() is None
    assert reader._next_timeout() is not None  # the loop wakes to look for the quiet
    assert reader._quieted(now) == []
    assert reader._quieted(now + 0.2) == [agent]  # read now, and continued
    assert not agent.muted and agent.paused and not agent.tracker.streaming
    assert abs(agent.tracker.last_output - (time.monotonic() - QUIET_PROVEN)) < 0.05
    assert agent.tracker.evaluate(time.monotonic())  # now quiet long enough: idle
    assert agent.state is AgentState.IDLE


def test_a_muted_agent_brought_on_screen_is_continued_at_once(tmp_path: Path) -> None:
    reader, agents = _reader(tmp_path, 2)
    reader.set_visible(set())
    agent = agents["A001"]
    reader.mute(agent, time.monotonic())
    agent.dirty = False
    reader.set_visible({"A001"})
    assert not agent.muted and agent.paused and agent.dirty
    assert agent in reader._due(time.monotonic() + 1)  # its read continues its pane
    reader.activity(agents["A000"])  # a report for an agent that is not muted: nothing
    assert not agents["A000"].dirty


async def test_output_while_a_capture_is_on_its_way_is_read_again(tmp_path: Path) -> None:
    """The doorbell of a line printed after the capture was asked for must not be lost when
    the reply comes (that line waited for the agent's next output: a stale tile)."""
    import asyncio

    from swarm_tui.tmux.protocol import Reply

    reader, agents = _reader(tmp_path, 1)
    reader.set_visible({"A000"})
    agent = agents["A000"]

    class Control:
        futures: list[asyncio.Future[Reply]] = []

        async def send(self, lines: list[str]) -> list[asyncio.Future[Reply]]:
            loop = asyncio.get_running_loop()
            self.futures = [loop.create_future() for _ in lines]
            return self.futures

    link = Link(True)
    link.control = Control()  # type: ignore[attr-defined]
    reading = asyncio.create_task(reader._refresh_link(link, [agent]))  # type: ignore[arg-type]
    await async_wait_until(lambda: bool(link.control.futures), 2, "the captures asked for")  # type: ignore[attr-defined]
    assert not agent.dirty  # asked for
    reader.mark(agent)  # a line printed meanwhile
    link.control.futures[0].set_result(Reply(1, True, (b"old line",), True))  # type: ignore[attr-defined]
    await reading
    assert agent.screen == ["old line"]
    assert agent.dirty and agent in reader._due(time.monotonic() + 1)  # read once more


def test_a_cli_that_is_starting_is_read_as_fast_as_a_tile_for_a_while(tmp_path: Path) -> None:
    """128 agents starting off screen: each one's idle prompt is read when drawn, not up to
    a second later (the fleet is up when the last one is seen idle)."""
    reader, agents = _reader(tmp_path, 2)
    reader.set_visible(set())
    young, old = agents["A000"], agents["A001"]
    for agent, started in ((young, 99.0), (old, 0.0)):
        agent.tracker = StateTracker(agent.adapter, started=started)
        agent.last_capture, agent.dirty = 100.0, False
        agent.tracker.output(100.02)
        reader.mark(agent)
    assert [a.name for a in reader._due(now=100.0 + 0.06)] == ["A000"]
    young.tracker.state = AgentState.IDLE  # once it has started, the usual pace
    young.dirty = False
    reader.mark(young)
    assert reader._due(now=100.5) == []
