"""Fixtures for the UI tests: a live fleet of fast mock agents served on its socket (the
engine in this process, the UI attached through a `FleetClient`), and still fleet views of
recorded screens for snapshots (no engine, no tmux, nothing moves)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from swarm_tui import paths
from swarm_tui.config.layout import load_layout
from swarm_tui.protocol.client import FleetClient, FleetView
from swarm_tui.protocol.models import (
    AgentView,
    GpuView,
    HostView,
    MessageView,
    SkillView,
    Snapshot,
    TaskView,
    VerdictView,
    Work,
)
from swarm_tui.testing.waiting import async_wait_until

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.server import FleetServer
    from swarm_tui.fleet.store import Store
    from swarm_tui.ui.app import SwarmApp

FAST = (
    '["--work", "0.4", "--startup", "0.2", "--permission-rate", "0", '
    '"--give-up-rate", "0", "--quiet-rate", "0"]'
)


SLOW = FAST.replace('"--work", "0.4"', '"--work", "60"')  # one turn takes 30 to 90 s


def write_layout(
    tmp: Path,
    names: list[str],
    name: str = "ui",
    roles: dict[str, str] | None = None,
    args: dict[str, str] | None = None,
) -> Path:
    roles, args = roles or {}, args or {}
    parts = [f'name = "{name}"\n[defaults]\ncli = "mock"\n']
    for n in names:
        parts.append(
            f'[[agents]]\nname = "{n}"\nfocus = "focus of {n}"\nrole = "{roles.get(n, "worker")}"\n'
            f'args = {args.get(n, FAST)}\nenv = {{ SWARM_MOCK_LOG = "{tmp / (n + ".log")}" }}\n'
        )
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(parts))
    return path


def received(tmp: Path, name: str) -> list[str]:
    log = tmp / f"{name}.log"
    if not log.exists():
        return []
    return [json.loads(line)["text"] for line in log.read_text().splitlines()]


async def until(
    predicate: Callable[[], object],
    timeout: float = 10.0,
    what: str = "",
    detail: Callable[[], str] | None = None,
) -> None:
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

    return [
        t.name_shown
        for t in app._tiles
        if t.name_shown is not None and t.display and isinstance(t, AgentTile)
    ]


@pytest.fixture
def swarm_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = Path(tmp_path_factory.mktemp("h"))
    monkeypatch.setenv("SWARM_HOME", str(home))
    return home


@dataclass
class Live:
    """A fleet's engine running in this process, served on its socket as `swarm up` serves
    it, and a client attached to it the way `swarm ui` attaches (what the app is given)."""

    fleet: Fleet
    store: Store
    server: FleetServer
    client: FleetClient

    @property
    def view(self) -> FleetView:
        assert self.client.view is not None
        return self.client.view


async def start_live(layout: Path, home: Path) -> Live:
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.server import FleetServer
    from swarm_tui.fleet.store import Store

    loaded = load_layout(layout)
    store = Store(home / f"{loaded.fleet}.sqlite3")
    fleet = Fleet(loaded, store)
    server = FleetServer(fleet, paths.socket_path(fleet.name))
    fleet.listener = server.watchers
    await server.start()
    await fleet.start()
    client = FleetClient(paths.socket_path(fleet.name))
    await client.connect()
    return Live(fleet, store, server, client)


async def stop_live(live: Live) -> None:
    """The engine first: a watcher that goes while the engine's tasks are being cancelled
    rings the screen reader's doorbell, and on Python 3.11 that can swallow the
    cancellation (the stop then waits out its 10 s bound). Then the client, and the server
    once the watcher's connection has ended (a handler left running is cancelled with the
    loop, and logged)."""
    try:
        await live.fleet.down()
    finally:
        await live.client.close()
        await live.server.stop()
        # the watcher's connection handler ends once it reads the client's hang-up
        await until(lambda: not live.server.admission.open, 5, "the server's connections closed")
        live.store.close()


@pytest.fixture
async def live(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Live]:
    names = ["Gauss", "Hilbert", "Noether", "Euler"]
    running = await start_live(
        write_layout(tmp_path, names, roles={"Gauss": "planner"}), swarm_home
    )
    try:
        yield running
    finally:
        await stop_live(running)


@pytest.fixture
async def slow(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Live]:
    """Gauss works 30 to 90 s on each message (what is sent meanwhile waits); Hilbert is fast."""
    running = await start_live(
        write_layout(tmp_path, ["Gauss", "Hilbert"], args={"Gauss": SLOW}), swarm_home
    )
    try:
        yield running
    finally:
        await stop_live(running)


class FakeClient(FleetClient):
    """A client with no engine behind it: a fixed view; every request is recorded (op and
    arguments) and answered as an engine would that did it."""

    def __init__(self, view: FleetView) -> None:
        super().__init__(Path("/nonexistent/still.sock"))
        self.view = view
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.shown: list[set[str]] = []  # every set_visible, in order
        self.existing: set[str] = set()  # layout names save_target says exist
        self.sizes: dict[str, tuple[int, int]] = {}  # the tiles' sizes, as last said
        # the engine's skills: what its host has, whatever this machine has
        self.engine_skills = {
            s.name: s
            for s in (
                SkillView(
                    name="thermonuclear-review",
                    description="review hard",
                    params={"rounds": "1"},
                    preview="Review the change…",
                ),
                SkillView(name="only-on-the-head-node", description="a skill this machine lacks"),
            )
        }

    @property
    def connected(self) -> bool:
        return True

    def set_visible(
        self, names: Iterable[str], sizes: Mapping[str, tuple[int, int]] | None = None
    ) -> None:
        self.shown.append(set(names))
        if sizes is not None:
            self.sizes = dict(sizes)

    def _asked(self, op: str, **args: Any) -> None:
        self.requests.append((op, args))

    def asked(self, op: str) -> list[dict[str, Any]]:
        return [args for o, args in self.requests if o == op]

    async def send(
        self, names: list[str], text: str, skill: str = "", params: dict[str, str] | None = None
    ) -> list[MessageView]:
        self._asked("send", names=names, text=text, skill=skill, params=params or {})
        return [
            MessageView(
                id=i + 1,
                created=0,
                sender="human",
                recipient=n,
                text=text,
                status="queued",
                updated=0,
            )
            for i, n in enumerate(names)
        ]

    async def set_focus(self, name: str, label: str) -> None:
        self._asked("focus", name=name, label=label)

    async def fresh(self, name: str, handoff: bool = True) -> None:
        self._asked("fresh", name=name, handoff=handoff)

    async def add_task(self, name: str, spec: str, verify: str = "") -> int:
        self._asked("task", name=name, spec=spec, verify=verify)
        return len(self.asked("task"))

    async def review(self, name: str) -> None:
        self._asked("judge", name=name)

    async def remind(
        self, action: str, rid: int = 0, text: str = "", minutes: float = 10
    ) -> dict[str, Any]:
        self._asked("remind", action=action, rid=rid, text=text, minutes=minutes)
        return {"ok": True}

    async def save(self, name: str, force: bool = False) -> str:
        self._asked("save", name=name, force=force)
        return f"/layouts/{name}.toml"

    async def save_target(self, name: str) -> tuple[str, bool]:
        self._asked("save-target", name=name)
        return f"/layouts/{name}.toml", name in self.existing

    async def messages(self, limit: int = 200) -> list[MessageView]:
        self._asked("messages", limit=limit)
        return []

    async def attach_argv(self, name: str) -> list[str]:
        self._asked("attach-argv", name=name)
        return []

    async def skills(self) -> dict[str, SkillView]:
        self._asked("skills")
        return dict(self.engine_skills)


SCREEN = """\x1b[1m✻ mock-agent 1.0 · mock-1 · {name}\x1b[0m

> {prompt}
● Reading src/parser.py
● Editing src/\x1b[32mcache\x1b[0m.py [not markup]
{busy}
────────────────────────────────────────
❯ {draft}
────────────────────────────────────────
  {ctx}% context left · ? for shortcuts"""

STATES = ["working", "idle", "needs-permission", "working", "exited", "starting"]
BUSY = "⠋ Working… (12s · ↓ 1200 tokens · esc to interrupt)"


def still_view(
    layout: Path,
    agents: list[AgentView],
    screens: dict[str, list[str]],
    hosts: list[HostView],
    work: Work | None = None,
) -> FleetView:
    """A fleet view as an engine's snapshot would give it, with the agents' screens."""
    view = FleetView(
        Snapshot(
            fleet=load_layout(layout).fleet,
            layout_path=str(layout),
            engine_pid=0,
            agents=agents,
            hosts=hosts,
            work=work or Work(),
        )
    )
    view.screens.update(screens)
    return view


def still_fleet(
    tmp: Path, count: int = 12, work: Work | None = None, roles: dict[str, str] | None = None
) -> FleetView:
    """Agents with fixed screens and states: a still picture of a healthy fleet."""
    names = [
        "Gauss",
        "Hilbert",
        "Noether",
        "Euler",
        "Riemann",
        "Ramanujan",
        "Lovelace",
        "Turing",
        "Kovalevskaya",
        "Cantor",
        "Poincaré",
        "Judge",
        "Fermat",
        "Galois",
        "Abel",
        "Laplace",
    ][:count]
    path = write_layout(tmp, names, name="still", roles=roles)
    past = time.time() - 2 * 3600 - 120
    agents, screens = [], {}
    for spec in load_layout(path).agents():
        state = STATES[spec.index % len(STATES)]
        agents.append(
            AgentView(
                name=spec.name,
                role=spec.role,
                host=spec.host,
                cli="mock",
                state=state,
                focus=spec.focus,
                question="run `pytest -q`" if state == "needs-permission" else "",
                options=[("1", "Yes"), ("2", "No, and tell the agent what to do differently")]
                if state == "needs-permission"
                else [],
                context_left=90,
                last_output=past,
                state_since=past,
                window="@1",
            )
        )
        screens[spec.name] = SCREEN.format(
            name=spec.name,
            prompt=f"task for {spec.name}",
            busy=BUSY if state == "working" else "",
            draft="",
            ctx=90 - spec.index,
        ).split("\n")
    return still_view(
        path, agents, screens, [HostView(name="local", connected=True, since=past)], work
    )


def still_cluster(tmp: Path) -> FleetView:
    """A still fleet on two nodes: node01 up with four GPUs, node02's link down."""
    path = tmp / "cluster.toml"
    path.write_text(
        'name = "cluster"\n[defaults]\ncli = "mock"\n'
        '[hosts."node[01-02]"]\nssh = "gpu-node-{}"\ngpus = 4\n'
        '[[agents]]\nname = "Planner"\nrole = "planner"\nfocus = "hand out tasks"\n'
        '[[groups]]\nhosts = ["node[01-02]"]\nper_host = 4\ngpus_per_agent = 1\n'
        'focus = "train a shard"\n'
    )
    past = time.time() - 2 * 3600 - 120
    agents, screens = [], {}
    for spec in load_layout(path).agents():
        agents.append(
            AgentView(
                name=spec.name,
                role=spec.role,
                host=spec.host,
                cli="mock",
                state="working",
                focus=spec.focus,
                context_left=70,
                last_output=past,
                window="@1",
            )
        )
        screens[spec.name] = SCREEN.format(
            name=spec.name,
            prompt="train shard",
            draft="",
            ctx=70,
            busy="⠋ Working… (3m · ↓ 9000 tokens · esc to interrupt)",
        ).split("\n")
    gpus = [
        GpuView(index=0, util=97, mem_used=61000, mem_total=81920),
        GpuView(index=1, util=40, mem_used=20000, mem_total=81920),
        GpuView(index=2, util=100, mem_used=80000, mem_total=81920),
        GpuView(index=3, util=0, mem_used=0, mem_total=81920),
    ]
    hosts = [
        HostView(name="local", connected=True, since=past),
        HostView(name="node01", connected=True, since=past, gpus=gpus),
        HostView(
            name="node02",
            connected=False,
            since=past,
            detail="node02: connection lost: Connection lost",
        ),
    ]
    return still_view(path, agents, screens, hosts)


def still_judged(tmp: Path) -> FleetView:
    """The still fleet with a judge agent and tasks that have verdicts."""
    tasks, verdicts = [], []
    for tid, (name, status, rounds, reasons) in enumerate(
        (
            ("Gauss", "incomplete", 1, "tests still fail"),
            ("Hilbert", "complete", 0, ""),
            ("Noether", "judging", 0, ""),
        ),
        start=1,
    ):
        tasks.append(
            TaskView(
                id=tid,
                agent=name,
                spec=f"Port the {name} module\nwith tests",
                status=status,
                rounds=rounds,
                reasons=reasons,
                origin="layout",
            )
        )
        if status != "judging":
            verdicts.append(
                VerdictView(
                    task=tid, time=1796200000, judge="Ramanujan", verdict=status, reasons=reasons
                )
            )
    work = Work(tasks=tasks, verdicts=verdicts, judge_log=["$ claude -p --output-format json"])
    view = still_fleet(tmp, count=6, work=work, roles={"Ramanujan": "judge"})
    for task in tasks:
        agent = view.agents[task.agent]
        view.agents[task.agent] = agent.model_copy(
            update={"focus": f"Port the {task.agent} module"}
        )
    return view
