"""The view tells the human when an agent needs them: the bell and a desktop notification
when an agent waits on a permission prompt (also one already waiting when the view opens),
the judge gives a verdict, the engine marks an agent stalled, an agent exits, or its host
goes down; once per agent and kind a minute, and one trailing alert at the minute's end for
what else came in it; the kinds the layout's `[notify] bell` names."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import (
    AgentView,
    HostView,
    NotifyView,
    Snapshot,
    TaskView,
    VerdictView,
    Work,
)
from swarm_tui.ui.alerts import Alerts, osc_notify
from swarm_tui.ui.app import SwarmApp
from tests.ui.conftest import FakeClient, still_fleet, until


def _agent(name: str, state: str, question: str = "", stalled: str = "") -> AgentView:
    return AgentView(name=name, role="worker", state=state, question=question, stalled=stalled)


def test_one_alert_per_agent_and_kind_a_minute_then_one_that_says_the_rest() -> None:
    written: list[str] = []
    now = [1000.0]
    alerts = Alerts(written.append, clock=lambda: now[0])
    alerts.agent(_agent("Gauss", "exited"))  # gone before the view opened: old news
    alerts.agent(_agent("Hilbert", "working"))
    assert written == []
    alerts.agent(_agent("Hilbert", "needs-permission", "run `rm -rf build`?"))
    assert len(written) == 1 and written[0].startswith("\x07")
    assert "Hilbert needs you: run `rm -rf build`?" in written[0]
    for state, question in (
        ("working", ""),
        ("needs-permission", "a?"),
        ("working", ""),
        ("needs-permission", "b?"),
        ("working", ""),
        ("needs-permission", "c?"),
    ):  # flapping
        now[0] += 5
        alerts.agent(_agent("Hilbert", state, question))
    assert len(written) == 1  # coalesced within the minute
    alerts.look(
        FleetView(
            Snapshot(
                fleet="f", layout_path="f.toml", engine_pid=0, agents=[], hosts=[], work=Work()
            )
        )
    )
    assert len(written) == 1  # the window is still open: nothing trails yet
    now[0] += 45  # the minute is over: one alert says what came in it, the last one last
    alerts.release()
    assert len(written) == 2 and "3 more: Hilbert needs you: c?" in written[1]
    alerts.release()
    assert len(written) == 2  # said once
    alerts.agent(_agent("Hilbert", "working"))
    alerts.agent(_agent("Hilbert", "needs-permission", "d?"))  # the trailing one's window
    alerts.agent(_agent("Hilbert", "exited"))  # another kind: its own alert
    assert len(written) == 3 and "Hilbert exited" in written[2]
    alerts.host(HostView(name="node01", connected=True))
    alerts.host(HostView(name="node01", connected=False, detail="connection lost"))
    assert "host node01 is down: connection lost" in written[3]
    now[0] += 60
    alerts.release()
    assert "1 more: Hilbert needs you: d?" in written[4] and len(written) == 5


def test_a_notification_cannot_be_split_or_ended_by_what_an_agent_asks() -> None:
    sequence = osc_notify("swarm", "Gauss needs you: \x1b]0;pwned\x07; rm\nthis")
    # two sequences, each ended by its own BEL; nothing from the text ends one early
    assert sequence.count("\x07") == 2 and sequence.count("\x1b") == 2
    assert sequence.startswith("\x1b]9;swarm: Gauss needs you:")
    assert "\x1b]777;notify;swarm;" in sequence


async def test_the_view_rings_when_an_agent_starts_to_wait(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=4))
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)):
        await until(lambda: hasattr(app, "alerts"), what="the view mounted")
        # Noether was already waiting when the view opened: it rings, once
        assert app.alerts.sent == [("Noether", "Noether needs you: run `pytest -q`")]
        app.alerts.sent.clear()
        written: list[str] = []
        app.alerts.write = written.append  # what would go to the terminal
        gauss = app.view.agents["Gauss"]
        app.view.agents["Gauss"] = gauss.model_copy(
            update={"state": "needs-permission", "question": "Bash(pytest -q)"}
        )
        app.bridge.agent_changed("Gauss")
        await until(lambda: app.alerts.sent, what="an alert for Gauss")
        assert app.alerts.sent == [("Gauss", "Gauss needs you: Bash(pytest -q)")]
        assert written and written[0].startswith("\x07")  # the bell
        assert "\x1b]9;swarm: Gauss needs you: Bash(pytest -q)\x07" in written[0]


def test_a_prompt_already_waiting_when_the_view_opens_rings_once() -> None:
    written: list[str] = []
    now = [1000.0]
    alerts = Alerts(written.append, clock=lambda: now[0])
    view = FleetView(
        Snapshot(
            fleet="f",
            layout_path="f.toml",
            engine_pid=0,
            hosts=[],
            agents=[_agent("Gauss", "needs-permission", "Bash(ls)"), _agent("Hilbert", "idle")],
            work=Work(),
        )
    )
    alerts.look(view)  # the view opens
    assert len(written) == 1 and "Gauss needs you: Bash(ls)" in written[0]
    for _ in range(3):  # every second after, and after a reconnect: no news
        now[0] += 100
        alerts.look(view)
    assert len(written) == 1


def _judged(verdicts: list[VerdictView]) -> FleetView:
    tasks = [TaskView(id=7, agent="Gauss", spec="Port the parser\nwith tests", status="incomplete")]
    return FleetView(
        Snapshot(
            fleet="f",
            layout_path="f.toml",
            engine_pid=0,
            hosts=[],
            agents=[_agent("Gauss", "working")],
            work=Work(tasks=tasks, verdicts=verdicts),
        )
    )


def test_a_new_verdict_rings_with_its_task_and_the_old_ones_do_not() -> None:
    written: list[str] = []
    old = VerdictView(task=7, time=100.0, judge="Jude", verdict="incomplete", reasons="no")
    view = _judged([old])
    alerts = Alerts(written.append)
    alerts.look(view)
    assert written == []  # verdicts given before the view opened are history
    new = VerdictView(task=7, time=200.0, judge="Jude", verdict="complete")
    view.set_work(_judged([old, new]).work)
    alerts.look(view)
    alerts.look(view)
    assert len(written) == 1
    assert "Gauss's task #7 is complete (Jude): Port the parser" in written[0]
    again = VerdictView(
        task=7,
        time=300.0,
        judge="verify",
        verdict="incomplete",
        reasons="the verify command failed",
    )
    view.set_work(_judged([old, new, again]).work)
    alerts.look(view)  # within the minute: held, then said at its end
    assert len(written) == 1


def test_a_stall_rings_once_and_again_only_after_the_agent_moved() -> None:
    written: list[str] = []
    now = [0.0]
    alerts = Alerts(written.append, clock=lambda: now[0])
    alerts.agent(_agent("Gauss", "idle"))
    why = "idle for 20m with its task open: Port the parser"
    alerts.agent(_agent("Gauss", "idle", stalled=why))
    now[0] += 120
    alerts.agent(_agent("Gauss", "idle", stalled="idle for 22m with its task open: …"))
    alerts.release()
    assert len(written) == 1 and f"Gauss stalled: {why}" in written[0]  # the same stall
    alerts.agent(_agent("Gauss", "working"))  # it moved
    alerts.agent(_agent("Gauss", "idle", stalled=why))  # and stalled again: news
    assert len(written) == 2 and f"Gauss stalled: {why}" in written[1]


def test_only_the_kinds_the_layout_names_ring() -> None:
    written: list[str] = []
    alerts = Alerts(written.append, lambda: NotifyView(bell=["stall"], every=60))
    alerts.agent(_agent("Gauss", "needs-permission", "Bash(ls)"))
    alerts.agent(_agent("Gauss", "exited"))
    assert written == []
    alerts.agent(_agent("Hilbert", "idle", stalled="idle for 20m with its task open: x"))
    assert len(written) == 1 and "Hilbert stalled" in written[0]


async def test_the_view_rings_for_a_verdict_and_a_stall(tmp_path: Path) -> None:
    view = still_fleet(tmp_path, count=4)
    view.set_work(
        Work(tasks=[TaskView(id=1, agent="Hilbert", spec="Port the parser", status="in-progress")])
    )
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(120, 40)):
        await until(lambda: hasattr(app, "alerts"), what="the view mounted")
        app.alerts.sent.clear()
        app.alerts.write = lambda text: None
        view.set_work(
            Work(
                tasks=view.work.tasks,
                verdicts=[
                    VerdictView(
                        task=1, time=5.0, judge="Jude", verdict="incomplete", reasons="no tests"
                    )
                ],
            )
        )
        app.bridge.work_changed()
        await until(lambda: app.alerts.sent, what="an alert for the verdict")
        assert app.alerts.sent == [
            ("Hilbert", "Hilbert's task #1 is incomplete (Jude): Port the parser — no tests")
        ]
        hilbert = view.agents["Hilbert"]
        view.agents["Hilbert"] = hilbert.model_copy(
            update={"stalled": "idle for 20m with its task open: Port the parser"}
        )
        app.bridge.agent_changed("Hilbert")
        await until(lambda: len(app.alerts.sent) == 2, what="an alert for the stall")
        assert app.alerts.sent[1] == (
            "Hilbert",
            "Hilbert stalled: idle for 20m with its task open: Port the parser",
        )
