"""The view tells the human when an agent needs them: the bell and a desktop notification
when an agent starts waiting on a permission prompt, exits, or its host goes down; once per
agent and kind a minute; nothing for what was already so when the view opened."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.protocol.models import AgentView, HostView
from swarm_tui.ui.alerts import Alerts, osc_notify
from swarm_tui.ui.app import SwarmApp
from tests.ui.conftest import FakeClient, still_fleet, until


def _agent(name: str, state: str, question: str = "") -> AgentView:
    return AgentView(name=name, role="worker", state=state, question=question)


def test_one_alert_per_agent_and_kind_a_minute_and_none_for_what_already_was() -> None:
    written: list[str] = []
    now = [1000.0]
    alerts = Alerts(written.append, clock=lambda: now[0])
    alerts.agent(_agent("Gauss", "needs-permission"))  # already waiting when the view opened
    alerts.agent(_agent("Hilbert", "working"))
    assert written == []
    alerts.agent(_agent("Hilbert", "needs-permission", "run `rm -rf build`?"))
    assert len(written) == 1 and written[0].startswith("\x07")
    assert "Hilbert needs you: run `rm -rf build`?" in written[0]
    for state in ("working", "needs-permission", "working", "needs-permission"):  # flapping
        now[0] += 5
        alerts.agent(_agent("Hilbert", state))
    assert len(written) == 1  # coalesced within the minute
    now[0] += 61
    alerts.agent(_agent("Hilbert", "working"))
    alerts.agent(_agent("Hilbert", "needs-permission"))
    alerts.agent(_agent("Hilbert", "exited"))  # another kind: its own alert
    assert len(written) == 3 and "Hilbert exited" in written[2]
    alerts.host(HostView(name="node01", connected=True))
    alerts.host(HostView(name="node01", connected=False, detail="connection lost"))
    assert "host node01 is down: connection lost" in written[3]


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
        assert app.alerts.sent == []  # Noether was already waiting: no news
        written: list[str] = []
        app.alerts.write = written.append  # what would go to the terminal
        gauss = app.view.agents["Gauss"]
        app.view.agents["Gauss"] = gauss.model_copy(
            update={"state": "needs-permission", "question": "Bash(pytest -q)"})
        app.bridge.agent_changed("Gauss")
        await until(lambda: app.alerts.sent, what="an alert for Gauss")
        assert app.alerts.sent == [("Gauss", "Gauss needs you: Bash(pytest -q)")]
        assert written and written[0].startswith("\x07")  # the bell
        assert "\x1b]9;swarm: Gauss needs you: Bash(pytest -q)\x07" in written[0]
