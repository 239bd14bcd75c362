"""StateTracker with a controlled clock: every `now` is passed in, nothing sleeps."""

from __future__ import annotations

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.agents.base import Reading as R
from swarm_tui.agents.generic import GenericAdapter
from swarm_tui.agents.mock_adapter import MockAdapter
from swarm_tui.fleet.tracker import SETTLE, StateTracker

T0 = 1000.0
IDLE_BOX = R(AgentState.IDLE, "")
BUSY = R(AgentState.WORKING, "")
ASKING = R(AgentState.NEEDS_PERMISSION, None, "run `make build`")
STARTING = R(AgentState.STARTING)
EPS = 1e-9  # float sums: a + hold - a may round just below hold (the engine adds 5 ms)


def shown(t: StateTracker) -> AgentState:
    """The state now (a call, so a type checker does not keep an earlier assert's narrowing)."""
    return t.state


def mock_tracker() -> StateTracker:
    return StateTracker(MockAdapter(), started=T0)


def generic_tracker() -> StateTracker:
    return StateTracker(GenericAdapter(), started=T0)


def idle_mock() -> tuple[StateTracker, float]:
    """A mock agent that has become idle; returns it and the time it did."""
    t = mock_tracker()
    t.screen(IDLE_BOX)
    t.evaluate(T0)
    now = T0 + MockAdapter.idle_quiet + EPS
    assert t.evaluate(now) and t.state is AgentState.IDLE
    return t, now


def test_starts_in_starting() -> None:
    t = mock_tracker()
    assert t.state is AgentState.STARTING
    assert t.since == T0 and t.last_output == T0
    assert not t.ready


# --------------------------------------------------------------------- starting -> idle
def test_starting_to_idle_holds_as_any_state_does() -> None:
    # the first prompt ends no turn: it holds SETTLE, not the quiet time that tells the end
    # of a turn from a gap between its steps
    t = mock_tracker()
    assert SETTLE < MockAdapter.idle_quiet
    t.screen(STARTING)
    assert not t.evaluate(T0 + 0.5)
    first_seen = T0 + 1.0
    t.output(first_seen - 0.01)  # the prompt is drawn, and read at once
    t.screen(IDLE_BOX)
    assert not t.evaluate(first_seen)
    assert not t.evaluate(first_seen + SETTLE - 0.02)
    assert t.state is AgentState.STARTING
    assert t.evaluate(first_seen - 0.01 + SETTLE + EPS)
    assert shown(t) is AgentState.IDLE
    assert not t.evaluate(first_seen + 5)  # no change: no second report


def test_a_cli_that_worked_while_starting_needs_the_quiet_hold() -> None:
    # busy at start (a first task from its command line, say): its prompt ends a turn
    t = mock_tracker()
    t.screen(BUSY)
    t.evaluate(T0 + 0.1)
    assert t.evaluate(T0 + 0.1 + SETTLE + EPS) and t.state is AgentState.WORKING
    done = T0 + 3
    t.output(done)
    t.screen(IDLE_BOX)
    assert not t.evaluate(done + SETTLE + 0.01)
    assert not t.evaluate(done + MockAdapter.idle_quiet - 0.01)
    assert t.evaluate(done + MockAdapter.idle_quiet + EPS)


def test_an_idle_screen_read_late_has_held_since_the_last_output() -> None:
    # the prompt was drawn 1.5 s before the capture that reads it (a busy node): nothing was
    # printed since, so the idle it shows has held that long; no second hold
    t = mock_tracker()
    t.output(T0 + 1.0)
    t.screen(IDLE_BOX)
    assert t.evaluate(T0 + 2.5)
    assert shown(t) is AgentState.IDLE


def test_output_after_an_idle_reading_keeps_the_hold() -> None:
    # read idle, then the pane printed again (not yet read): the hold runs from the reading
    t = mock_tracker()
    t.output(T0 + 0.5)
    t.screen(IDLE_BOX)
    assert not t.evaluate(T0 + 0.6)
    t.output(T0 + 0.7)
    assert not t.evaluate(T0 + 0.6 + SETTLE - 0.01)
    assert t.next_deadline() == pytest.approx(T0 + 0.6 + SETTLE)


def test_a_muted_panes_late_idle_reading_still_holds() -> None:
    # a muted pane's output times are known only once a second: never taken as quiet
    t = mock_tracker()
    t.output(T0 + 1.0)
    t.streaming = True
    t.screen(IDLE_BOX)
    assert not t.evaluate(T0 + 2.5)
    assert t.evaluate(T0 + 2.5 + SETTLE + EPS)


def test_blank_screen_while_starting_stays_starting_for_box_readers() -> None:
    # a CLI that draws an input box has not started until the box shows, however quiet
    t = mock_tracker()
    t.screen(R(None))
    for dt in (0.1, 5.0, 60.0):
        assert not t.evaluate(T0 + dt)
    assert t.state is AgentState.STARTING


# ------------------------------------------------------------------------ no flickering
def test_one_busy_redraw_does_not_flip_an_idle_agent() -> None:
    t, now = idle_mock()
    t.screen(BUSY)
    assert not t.evaluate(now + 0.1)
    assert not t.evaluate(now + 0.1 + SETTLE / 2)
    t.screen(IDLE_BOX)  # back to idle before SETTLE
    assert not t.evaluate(now + 0.1 + SETTLE * 0.9)
    assert t.state is AgentState.IDLE
    # a later busy blip starts its own clock: the first blip's time does not count
    t.screen(BUSY)
    later = now + 0.1 + SETTLE * 1.1
    assert not t.evaluate(later)
    assert t.state is AgentState.IDLE
    assert t.next_deadline() == pytest.approx(later + SETTLE)


def test_busy_that_holds_for_settle_is_shown() -> None:
    t, now = idle_mock()
    t.screen(BUSY)
    assert not t.evaluate(now + 0.1)
    assert not t.evaluate(now + 0.1 + SETTLE - 0.01)
    assert t.evaluate(now + 0.1 + SETTLE + EPS)
    assert t.state is AgentState.WORKING
    assert t.since == now + 0.1 + SETTLE + EPS
    assert not t.ready


def test_idle_after_work_needs_the_idle_quiet_hold() -> None:
    t, now = idle_mock()
    t.screen(BUSY)
    t.evaluate(now)
    t.evaluate(now + SETTLE + EPS)
    assert t.state is AgentState.WORKING
    done = now + 5
    t.output(done)  # the work ends by drawing the prompt, read at once
    t.screen(IDLE_BOX)
    assert not t.evaluate(done)
    assert not t.evaluate(done + MockAdapter.idle_quiet - 0.01)
    assert t.evaluate(done + MockAdapter.idle_quiet + EPS)
    assert shown(t) is AgentState.IDLE


# ----------------------------------------------------------------------------- dialogs
def test_needs_permission_after_settle() -> None:
    t, now = idle_mock()
    t.screen(ASKING)
    assert not t.evaluate(now + 1)
    assert t.next_deadline() == pytest.approx(now + 1 + SETTLE)
    assert t.evaluate(now + 1 + SETTLE + EPS)
    assert t.state is AgentState.NEEDS_PERMISSION
    assert t.reading.question == "run `make build`"
    assert not t.ready


# -------------------------------------------------------------------------------- death
def test_exited_at_once_when_the_pane_dies() -> None:
    t, now = idle_mock()
    t.pane_died(True)
    assert t.evaluate(now + 0.001)
    assert t.state is AgentState.EXITED and t.since == now + 0.001
    assert t.next_deadline() is None
    assert not t.ready


def test_exited_at_once_even_while_starting_or_busy() -> None:
    t = mock_tracker()
    t.screen(BUSY)
    t.evaluate(T0 + 0.1)  # a WORKING candidate is pending
    t.pane_died(True)
    assert t.evaluate(T0 + 0.2)
    assert t.state is AgentState.EXITED


def test_respawned_pane_leaves_exited() -> None:
    t, now = idle_mock()
    t.pane_died(True)
    t.evaluate(now)
    t.pane_died(False)
    t.screen(STARTING)
    assert not t.evaluate(now + 1)
    assert t.evaluate(now + 1 + SETTLE + EPS)
    assert t.state is AgentState.STARTING


# ---------------------------------------------------------------------- generic adapter
def test_generic_output_then_quiet_becomes_idle() -> None:
    t = generic_tracker()
    quiet = GenericAdapter.idle_quiet
    t.screen(GenericAdapter().read(["$ make", "building..."]))
    assert t.reading.state is None
    t.output(T0 + 0.5)
    assert not t.evaluate(T0 + 0.6)
    assert t.state is AgentState.STARTING  # output while starting is still starting
    assert t.next_deadline() == pytest.approx(T0 + 0.5 + quiet)
    # quiet since the last output: idle is wanted and, after its hold, shown
    for now in (T0 + 0.5 + quiet, T0 + 0.5 + 2 * quiet, T0 + 100):
        t.evaluate(now)
    assert shown(t) is AgentState.IDLE
    assert t.ready  # no input box to wait for


def test_generic_output_keeps_it_from_idle() -> None:
    t = generic_tracker()
    quiet = GenericAdapter.idle_quiet
    now = T0
    for _ in range(20):  # output every half quiet period: never quiet
        now += quiet / 2
        t.output(now)
        t.evaluate(now)
        assert t.state is AgentState.STARTING


def test_generic_idle_agent_that_prints_again_is_working() -> None:
    t = generic_tracker()
    quiet = GenericAdapter.idle_quiet
    for now in (T0 + quiet, T0 + 3 * quiet):
        t.evaluate(now)
    assert t.state is AgentState.IDLE
    start = T0 + 10 * quiet
    t.output(start)
    assert not t.evaluate(start)
    assert t.evaluate(start + SETTLE + EPS)
    assert shown(t) is AgentState.WORKING
    assert not t.ready


def test_generic_is_idle_after_idle_quiet_of_silence() -> None:
    t = generic_tracker()
    quiet = GenericAdapter.idle_quiet
    t.output(T0 + 1)
    now = T0 + 1
    while now < T0 + 1 + quiet + 0.2:  # the engine evaluates at each next_deadline
        deadline = t.next_deadline()
        assert deadline is not None
        now = max(now, deadline + EPS)
        t.evaluate(now)
        if t.state is AgentState.IDLE:
            break
    assert t.state is AgentState.IDLE
    assert now <= T0 + 1 + quiet + 0.01


# ------------------------------------------------------------------------------- ready
def test_ready_needs_idle_state_and_an_idle_screen() -> None:
    t, now = idle_mock()
    assert t.ready
    t.screen(R(AgentState.IDLE, "half-typed draft"))
    assert t.ready  # a draft is an input box too; the injector clears it first
    t.screen(BUSY)  # the shown state lags the screen by SETTLE: not ready meanwhile
    assert t.state is AgentState.IDLE
    assert not t.ready
    t.screen(R(None))
    assert not t.ready


def test_typed_makes_an_idle_agent_busy_at_once() -> None:
    t, now = idle_mock()
    t.typed(now + 1)
    assert t.state is AgentState.WORKING
    assert t.since == now + 1 and t.last_output == now + 1
    assert not t.ready


# ------------------------------------------------------------------------ next_deadline
def test_next_deadline() -> None:
    t = mock_tracker()
    # nothing read yet: the quiet time since start may change something
    assert t.next_deadline() == pytest.approx(T0 + MockAdapter.idle_quiet)
    t.output(T0 + 0.2)  # the prompt drawn, read at once
    t.screen(IDLE_BOX)
    t.evaluate(T0 + 0.2)
    assert t.next_deadline() == pytest.approx(T0 + 0.2 + SETTLE)  # a first prompt's hold
    t.evaluate(T0 + 0.2 + SETTLE + EPS)
    assert t.state is AgentState.IDLE
    assert t.next_deadline() is None  # idle, screen agrees: nothing to wait for
    t.screen(BUSY)
    t.evaluate(T0 + 5)
    assert t.next_deadline() == pytest.approx(T0 + 5 + SETTLE)


def test_evaluating_at_next_deadline_commits() -> None:
    t = mock_tracker()
    t.screen(IDLE_BOX)
    t.evaluate(T0 + 0.3)
    deadline = t.next_deadline()
    assert deadline is not None
    assert t.evaluate(deadline + EPS)
    assert t.state is AgentState.IDLE
