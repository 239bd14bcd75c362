"""States over time, with a fake clock: what a night of real programs produces."""

from __future__ import annotations

from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.agents.generic import GenericAdapter
from swarm_tui.agents.mock_adapter import MockAdapter
from swarm_tui.fleet.tasks import judge_name
from swarm_tui.fleet.tracker import READY_QUIET, StateTracker


def _run(tracker: StateTracker, outputs: list[float], until: float) -> list[AgentState]:
    """Feed output at the given times, evaluate every 0.1 s; the states it went through."""
    seen = [tracker.state]
    now, pending = 0.0, sorted(outputs)
    while now <= until:
        while pending and pending[0] <= now:
            tracker.output(pending.pop(0))
        if tracker.evaluate(now):
            seen.append(tracker.state)
        now = round(now + 0.1, 1)
    return seen


def test_a_command_printing_every_3s_does_not_flap() -> None:
    tracker = StateTracker(GenericAdapter(), started=0.0)
    states = _run(tracker, [3.0 * i for i in range(1, 20)], 58.0)
    assert states.count(AgentState.IDLE) <= 1, states  # at most the first, before it learns
    assert tracker.state is AgentState.WORKING


def test_a_real_rest_after_periodic_output_is_idle_again() -> None:
    tracker = StateTracker(GenericAdapter(), started=0.0)
    _run(tracker, [3.0 * i for i in range(1, 8)], 21.0)
    assert tracker.state is AgentState.WORKING
    states = _run(tracker, [], 40.0)  # the command stopped printing
    assert states[-1] is AgentState.IDLE


def test_a_box_whose_surroundings_cannot_tell_is_ready_once_quiet() -> None:
    """An error line above Codex's box makes its reading "cannot tell": a queue must not wait
    for a screen that will never change."""
    tracker = StateTracker(MockAdapter(), started=0.0)
    tracker.state = AgentState.IDLE
    tracker.screen(Reading(None, ""))
    tracker.output(10.0)
    assert not tracker.ready_at(10.0 + READY_QUIET / 2)
    assert tracker.ready_at(10.0 + READY_QUIET)
    tracker.screen(Reading(None, None))  # no box at all: a dialog or a picker
    assert not tracker.ready_at(100.0)


def test_an_unreachable_agent_is_never_idle_nor_ready() -> None:
    tracker = StateTracker(GenericAdapter(), started=0.0)
    tracker.evaluate(5.0)
    assert tracker.state is AgentState.IDLE
    tracker.unreachable = True
    assert tracker.evaluate(5.1) and tracker.state is AgentState.UNREACHABLE
    assert not tracker.ready_at(6.0)
    tracker.unreachable = False
    tracker.evaluate(9.0)
    assert tracker.state is AgentState.IDLE


def test_a_headless_judge_is_named_by_its_program() -> None:
    assert judge_name("env none=1 FOO=bar claude -p --output-format json") == "claude"
    assert judge_name("/opt/bin/codex exec -") == "codex"
    assert judge_name("env -i PATH=/bin gemini") == "gemini"
