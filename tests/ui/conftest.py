"""Fixtures for the UI tests: a live fleet of fast mock agents, and a still fleet of
recorded screens for snapshots (no tmux, nothing moves)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing.waiting import async_wait_until

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from swarm_tui.agents.mock_adapter import MockAdapter
    from swarm_tui.ui.app import SwarmApp

FAST = '["--work", "0.4", "--startup", "0.2", "--permission-rate", "0", ' \
       '"--give-up-rate", "0", "--quiet-rate", "0"]'


SLOW = FAST.replace('"--work", "0.4"', '"--work", "60"')  # one turn takes 30 to 90 s


def write_layout(tmp: Path, names: list[str], name: str = "ui", roles: dict[str, str] | None = None,
                 args: dict[str, str] | None = None) -> Path:
    roles, args = roles or {}, args or {}
    parts = [f'name = "{name}"\n[defaults]\ncli = "mock"\n']
    for n in names:
        parts.append(
            f'[[agents]]\nname = "{n}"\nfocus = "focus of {n}"\nrole = "{roles.get(n, "worker")}"\n'
            f'args = {args.get(n, FAST)}\nenv = {{ SWARM_MOCK_LOG = "{tmp / (n + ".log")}" }}\n')
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(parts))
    return path


def received(tmp: Path, name: str) -> list[str]:
    log = tmp / f"{name}.log"
    if not log.exists():
        return []
    return [json.loads(line)["text"] for line in log.read_text().splitlines()]


async def until(predicate: Callable[[], object], timeout: float = 10.0, what: str = "",
                detail: Callable[[], str] | None = None) -> None:
    """Poll a condition with a deadline (the UI and tmux run on their own clocks); `detail`
    says what was there instead."""
    await async_wait_until(predicate, timeout, what or "condition", detail)


def burst(app: App[Any], *keys: str) -> None:
    """Send keys the way a terminal delivers a fast typist's (or a paste's) keys: all at
    once, each posted before the app has handled the one before (`pilot.press` waits)."""
    from textual import events
    from textual.keys import _character_to_key

    assert app._driver is not None
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        char = key if len(key) == 1 else {"tab": "\t", "space": " "}.get(key)
        event = events.Key(name, char)
        event.set_sender(app)
        app._driver.send_message(event)


def text_of(widget: Widget) -> str:
    """What a widget (or a whole screen) shows, as plain text, one line per row."""
    from textual.screen import Screen

    if isinstance(widget, Screen):
        strips = widget._compositor.render_strips()
        return "\n".join("".join(seg.text for seg in strip) for strip in strips)
    lines = widget.render_lines(widget.region.reset_offset)
    return "\n".join("".join(seg.text for seg in strip) for strip in lines).rstrip()


def plain_of(widget: Widget) -> str:
    """A widget's content as plain text, before wrapping to its width."""
    from rich.text import Text
    from textual.content import Content

    rendered = widget.render()
    assert isinstance(rendered, Text | Content), type(rendered)
    return rendered.plain


def shown(app: SwarmApp) -> list[str]:
    """The names of the agents whose tiles are on screen, in order."""
    from swarm_tui.ui.tiles import AgentTile

    return [t.agent.name for t in app._tiles if t.agent is not None and t.display
            and isinstance(t, AgentTile)]


@pytest.fixture
def swarm_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = Path(tmp_path_factory.mktemp("h"))
    monkeypatch.setenv("SWARM_HOME", str(home))
    return home


@pytest.fixture
async def live_fleet(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Fleet]:
    names = ["Gauss", "Hilbert", "Noether", "Euler"]
    path = write_layout(tmp_path, names, roles={"Gauss": "planner"})
    store = Store(swarm_home / "ui.sqlite3")
    fleet = Fleet(load_layout(path), store)
    await fleet.start()
    try:
        yield fleet
    finally:
        await fleet.down()
        store.close()


@pytest.fixture
async def slow_fleet(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Fleet]:
    """Gauss works 30 to 90 s on each message (what is sent meanwhile waits); Hilbert is fast."""
    path = write_layout(tmp_path, ["Gauss", "Hilbert"], args={"Gauss": SLOW})
    store = Store(swarm_home / "ui.sqlite3")
    fleet = Fleet(load_layout(path), store)
    await fleet.start()
    try:
        yield fleet
    finally:
        await fleet.down()
        store.close()


SCREEN = """\x1b[1m✻ mock-agent 1.0 · mock-1 · {name}\x1b[0m

> {prompt}
● Reading src/parser.py
● Editing src/\x1b[32mcache\x1b[0m.py [not markup]
{busy}
────────────────────────────────────────
❯ {draft}
────────────────────────────────────────
  {ctx}% context left · ? for shortcuts"""


def still_fleet(tmp: Path, count: int = 12) -> Fleet:
    """A fleet whose agents hold fixed screens and states: no tmux, for snapshots."""
    names = ["Gauss", "Hilbert", "Noether", "Euler", "Riemann", "Ramanujan", "Lovelace",
             "Turing", "Kovalevskaya", "Cantor", "Poincaré", "Judge", "Fermat", "Galois",
             "Abel", "Laplace"][:count]
    path = write_layout(tmp, names, name="still")
    store = Store(tmp / "still.sqlite3")
    fleet = Fleet(load_layout(path), store)
    states = [AgentState.WORKING, AgentState.IDLE, AgentState.NEEDS_PERMISSION,
              AgentState.WORKING, AgentState.EXITED, AgentState.STARTING]
    past = time.time() - 2 * 3600 - 120
    for link in fleet.links.values():
        link.connected = True  # a still picture of a healthy fleet
    for spec in fleet.loaded.agents():
        state = states[spec.index % len(states)]
        busy = "⠋ Working… (12s · ↓ 1200 tokens · esc to interrupt)" \
            if state is AgentState.WORKING else ""
        screen = SCREEN.format(name=spec.name, prompt=f"task for {spec.name}", busy=busy,
                               draft="", ctx=90 - spec.index).split("\n")
        tracker = fleet.agents[spec.name].tracker
        tracker.state = state
        tracker.reading = Reading(state, "", "run `pytest -q`"
                                  if state is AgentState.NEEDS_PERMISSION else "", 90)
        agent = Agent(spec=spec, adapter=_adapter(), token=store.token_for(spec.name),
                      focus=spec.focus, tracker=tracker, window="@1", pane=f"%{spec.index}",
                      screen=screen, last_output_wall=past)
        fleet.agents[spec.name] = agent
    return fleet


def _adapter() -> MockAdapter:
    from swarm_tui.agents.mock_adapter import MockAdapter

    return MockAdapter()


def still_cluster(tmp: Path) -> Fleet:
    """A still fleet on two nodes: node01 up with four GPUs, node02's link down."""
    from swarm_tui.fleet.link import GpuStat

    path = tmp / "cluster.toml"
    path.write_text(
        'name = "cluster"\n[defaults]\ncli = "mock"\n'
        '[hosts."node[01-02]"]\nssh = "gpu-node-{}"\ngpus = 4\n'
        '[[agents]]\nname = "Planner"\nrole = "planner"\nfocus = "hand out tasks"\n'
        '[[groups]]\nhosts = ["node[01-02]"]\nper_host = 4\ngpus_per_agent = 1\n'
        'focus = "train a shard"\n')
    store = Store(tmp / "cluster.sqlite3")
    fleet = Fleet(load_layout(path), store)
    past = time.time() - 2 * 3600 - 120
    for agent in fleet.agents.values():
        agent.tracker.state = AgentState.WORKING
        agent.tracker.reading = Reading(AgentState.WORKING, "", "", 70)
        agent.screen = SCREEN.format(name=agent.name, prompt="train shard", draft="", ctx=70,
                                     busy="⠋ Working… (3m · ↓ 9000 tokens · esc to interrupt)"
                                     ).split("\n")
        agent.last_output_wall = past
        agent.window, agent.pane = "@1", "%1"
    links = fleet.links
    for link in links.values():
        link.connected, link.since = True, past
    links["node01"].gpus = [GpuStat(0, 97, 61000, 81920), GpuStat(1, 40, 20000, 81920),
                            GpuStat(2, 100, 80000, 81920), GpuStat(3, 0, 0, 81920)]
    links["node02"].connected = False
    links["node02"].detail = "node02: connection lost: Connection lost"
    return fleet


def still_judged(tmp: Path) -> Fleet:
    """The still fleet with a judge agent and tasks that have verdicts, and a reminder."""
    fleet = still_fleet(tmp, count=6)
    judge = fleet.agents["Ramanujan"]
    judge.spec = judge.spec.model_copy(update={"role": "judge"})
    store = fleet.store
    for name, status, rounds, reasons in (("Gauss", "incomplete", 1, "tests still fail"),
                                          ("Hilbert", "complete", 0, ""),
                                          ("Noether", "judging", 0, "")):
        tid = store.add_task(name, {"spec": f"Port the {name} module\nwith tests"}, "layout")
        store.update_task(tid, status=status, rounds=rounds, reasons=reasons)
        if status != "judging":
            store.add_verdict(tid, "Ramanujan", status, reasons, "")
        fleet.agents[name].focus = f"Port the {name} module"
    fleet.tasks.judge_log.append("$ claude -p --output-format json")
    store.db.execute("UPDATE verdicts SET time = 1796200000")
    return fleet
