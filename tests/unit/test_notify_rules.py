"""The rules of `[notify]` that the engine and the views share: how alerts coalesce (one per
subject and kind per window, one trailing alert for the rest), what a stall is and how the
engine marks one (once per stall), what a verdict alert says, and bad values refused in one
line naming the file and the field."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import parse_layout
from swarm_tui.config.notify import Coalescer, NotifySpec, stall_reason, verdict_text
from swarm_tui.errors import ConfigError
from swarm_tui.fleet.stalls import StallWatch


def test_one_alert_a_window_and_one_trailing_alert_that_says_the_rest() -> None:
    now = [0.0]
    c = Coalescer(lambda: now[0])
    assert c.offer("Gauss", "permission", "Gauss needs you: a?", 60) == "Gauss needs you: a?"
    for i, q in enumerate("bcd"):
        now[0] = 10.0 * (i + 1)
        assert c.offer("Gauss", "permission", f"Gauss needs you: {q}?", 60) is None
    assert c.offer("Gauss", "exited", "Gauss exited", 60) == "Gauss exited"  # another kind
    assert c.offer("Hilbert", "permission", "Hilbert needs you", 60) == "Hilbert needs you"
    now[0] = 59.0
    assert c.due(60) == []  # not over yet
    now[0] = 60.0
    assert c.due(60) == [("Gauss", "permission", "3 more: Gauss needs you: d?")]
    assert c.due(60) == []  # said once; the quiet windows of the others end
    now[0] = 70.0  # the trailing alert opened a window: one a minute, still
    assert c.offer("Gauss", "permission", "Gauss needs you: e?", 60) is None
    now[0] = 200.0  # nobody released that window in time: the next alert says it all
    assert (
        c.offer("Gauss", "permission", "Gauss needs you: f?", 60) == "2 more: Gauss needs you: f?"
    )
    now[0] = 300.0
    assert c.due(60) == []
    assert c.offer("Gauss", "permission", "Gauss needs you: g?", 60) == "Gauss needs you: g?"


def test_a_stall_is_an_open_task_with_an_idle_or_silent_agent() -> None:
    spec = "Port the parser\nwith tests"
    assert (
        stall_reason("idle", 1200, 1300, spec, 1200)
        == "idle for 20m with its task open: Port the parser"
    )
    assert (
        stall_reason("working", 5, 1500, spec, 1200)
        == "working with no output for 25m on: Port the parser"
    )
    assert stall_reason("idle", 1199, 1300, spec, 1200) == ""  # not yet
    assert stall_reason("idle", 9999, 9999, None, 1200) == ""  # no open task: finished
    assert stall_reason("working", 5, 60, spec, 1200) == ""  # printing
    for state in ("needs-permission", "exited", "unreachable", "starting"):
        assert stall_reason(state, 9999, 9999, spec, 1200) == ""  # alerts of their own


def test_what_a_verdict_alert_says() -> None:
    assert (
        verdict_text("Gauss", 3, "Port the parser\nwith tests", "incomplete", "Jude", "tests fail")
        == "Gauss's task #3 is incomplete (Jude): Port the parser — tests fail"
    )
    assert (
        verdict_text("Gauss", 3, "Port the parser", "complete", "Jude", "")
        == "Gauss's task #3 is complete (Jude): Port the parser"
    )
    assert (
        verdict_text("Gauss", 3, "Port the parser", "none", "Jude", "no verdict line")
        == "Gauss's task #3 got no verdict from Jude: Port the parser — no verdict line"
    )


@pytest.mark.parametrize(
    ("toml", "field", "says"),
    [
        ('stall_after = "20"', "notify.stall_after", "no unit"),
        ('stall_after = "5s"', "notify.stall_after", "too short"),
        ('kinds = ["stalls"]', "notify.kinds", "verdict"),
        ('bell = ["bell"]', "notify.bell", "permission"),
    ],
)
def test_a_bad_notify_value_is_one_line_naming_the_file_and_field(
    tmp_path: Path, toml: str, field: str, says: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\n[notify]\n{toml}\n[[agents]]\nname = "A"\ncli = "mock"\n')
    with pytest.raises(ConfigError) as exc:
        parse_layout(path, path.read_text())
    text = str(exc.value)
    assert len(text.strip().splitlines()) == 1, text
    assert str(path) in text and field in text and says in text, text


def test_the_stall_default_and_the_kinds() -> None:
    spec = NotifySpec()
    assert spec.stall_seconds == 20 * 60
    assert set(spec.kinds) == set(spec.bell) == {"permission", "verdict", "stall", "exited", "host"}


@dataclass
class _Tracker:
    since: float = 0.0
    last_output: float = 0.0


@dataclass
class _Agent:
    name: str
    state: AgentState
    tracker: _Tracker = field(default_factory=_Tracker)
    stalled: str = ""


@dataclass
class _Task:
    agent: str
    spec: str
    status: str = "in-progress"


@dataclass
class _Board:
    rows: list[_Task]

    def tasks(self, agent: str | None = None) -> list[_Task]:
        return self.rows


class _Listener:
    def __init__(self) -> None:
        self.changed: list[str] = []

    def agent_changed(self, agent: _Agent) -> None:
        self.changed.append(agent.name)


def test_the_engine_marks_a_stall_and_alerts_it_once_until_the_agent_moves() -> None:
    now = [0.0]
    gauss = _Agent("Gauss", AgentState.IDLE)
    done = _Agent("Hilbert", AgentState.IDLE)  # its task is complete: idle because finished
    board = _Board([_Task("Gauss", "Port the parser"), _Task("Hilbert", "Docs", "complete")])
    listener = _Listener()
    alerts: list[tuple[str, str, str]] = []
    spec = NotifySpec(stall_after="10m")
    watch = StallWatch(
        lambda: [gauss, done],
        board,
        lambda: spec,  # type: ignore[arg-type]
        lambda: listener,
        lambda *a: alerts.append(a),  # type: ignore[arg-type]
        clock=lambda: now[0],
    )
    now[0] = 599.0
    assert watch.tick() == [] and gauss.stalled == ""
    now[0] = 600.0
    assert watch.tick() == ["Gauss"]
    assert gauss.stalled == "idle for 10m with its task open: Port the parser"
    assert alerts == [("stall", "Gauss", "Gauss stalled: " + gauss.stalled)]
    assert listener.changed == ["Gauss"]  # the views hear of it
    for t in (700.0, 1300.0, 5000.0):  # still the same stall: no news
        now[0] = t
        assert watch.tick() == []
    assert len(alerts) == 1 and done.stalled == ""
    gauss.state, gauss.tracker.since, gauss.tracker.last_output = AgentState.WORKING, 5000, 5000
    assert watch.tick() == [] and gauss.stalled == ""  # it moved
    assert listener.changed == ["Gauss", "Gauss"]
    now[0] = 5000.0 + 600  # working, and not a byte for ten minutes: stalled again
    assert watch.tick() == ["Gauss"] and len(alerts) == 2
    assert alerts[1][2] == "Gauss stalled: working with no output for 10m on: Port the parser"


def test_a_worker_waiting_for_its_judge_is_not_stalled() -> None:
    """Claimed done or being judged: the judge is slow, not the worker; a task sent back
    (incomplete), pending or in progress is the worker's to do."""
    now = [10_000.0]
    statuses = ["claimed-done", "judging", "incomplete", "pending", "in-progress"]
    agents = [_Agent(f"W{i}", AgentState.IDLE) for i in range(len(statuses))]
    pairs = zip(agents, statuses, strict=True)
    board = _Board([_Task(a.name, "Port the parser", s) for a, s in pairs])
    alerts: list[tuple[str, str, str]] = []
    spec = NotifySpec(stall_after="10m")
    watch = StallWatch(
        lambda: agents,
        board,
        lambda: spec,  # type: ignore[arg-type]
        _Listener,  # type: ignore[arg-type]
        lambda *a: alerts.append(a),  # type: ignore[arg-type]
        clock=lambda: now[0],
    )
    assert watch.tick() == ["W2", "W3", "W4"]
    assert [a.name for a in agents if a.stalled] == ["W2", "W3", "W4"]
