"""The sidebar's clock says how long an agent has been what its row says: for one waiting on a
prompt, unreachable, idle or exited, since that began; working, how long its screen has been
quiet.
An agent unreachable for 5 s whose screen was last seen changing 30 s ago read
`unreachable 30s`, as if the outage were 30 s old."""

from __future__ import annotations

from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.durations import Clock
from swarm_tui.ui.sidebar import FULL, right_part

NOW = 1_800_000_000.0


def row(state: str) -> str:
    agent = AgentView(
        name="Gauss", role="worker", state=state, last_output=NOW - 30, state_since=NOW - 5
    )
    return right_part(agent, Clock(NOW), None, FULL)


def test_unreachable_counts_from_the_outage() -> None:
    assert row("unreachable") == "unreachable 5s"


def test_a_prompt_counts_from_when_it_was_asked() -> None:
    assert row("needs-permission") == "needs-permission 5s"


def test_idle_and_exited_count_from_when_they_began() -> None:
    # (a CLI redrawing for a resized window printed; the agent stayed idle all along)
    assert row("idle") == "idle 5s"
    assert row("exited") == "exited 5s"


def test_working_counts_the_quiet_screen() -> None:
    assert row("working") == "working 30s"
