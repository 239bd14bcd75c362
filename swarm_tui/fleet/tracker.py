"""An agent's state from its screen readings, its output times and its pane's life.

A state must hold for a moment before it is shown, so one redraw never makes it flicker;
idle after work needs the adapter's quiet time. The clock is passed in, so tests control time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from swarm_tui.agents.base import Adapter, AgentState, Reading

SETTLE = 0.3  # seconds a non-idle state must hold before it is shown
QUIET_MAX = 30.0  # seconds: the longest quiet time a periodic printer can teach the tracker
READY_QUIET = 3.0  # seconds a box whose chrome cannot tell must stay quiet to take a message


@dataclass
class StateTracker:
    adapter: Adapter
    started: float
    state: AgentState = AgentState.STARTING
    since: float = 0.0
    reading: Reading = field(default_factory=lambda: Reading(None))
    last_output: float = 0.0
    dead: bool = False
    _candidate: AgentState | None = None
    _candidate_since: float = 0.0
    signal: AgentState | None = None  # from the CLI itself (hooks); wins until new output
    signal_at: float = 0.0
    unreachable: bool = False  # the host's link is down
    quiet_needed: float = 0.0  # idle from quiet time alone needs this long (learned)
    # its output is known only once a second (a muted pane): it counts as printing until
    # the screen reader says it went quiet, never idle from a gap between two reports
    streaming: bool = False

    def __post_init__(self) -> None:
        self.since = self.started
        self.last_output = self.started
        self.quiet_needed = self.adapter.idle_quiet

    def output(self, now: float) -> None:
        if (
            self.state is AgentState.IDLE
            and self.reading.state is None
            and now - self.since < 10 * self.quiet_needed
        ):
            # idle from quiet alone, then output again soon: a command that prints every few
            # seconds, not one that finished. Wait longer than that gap before calling idle.
            gap = now - self.last_output
            if gap <= 5 * self.adapter.idle_quiet:  # longer gaps are rests, not a rhythm
                self.quiet_needed = min(QUIET_MAX, max(self.quiet_needed, gap * 1.5))
        elif self.state is AgentState.IDLE and now - self.since >= 10 * self.quiet_needed:
            self.quiet_needed = self.adapter.idle_quiet  # a real rest: forget what was learned
        self.last_output = now

    def screen(self, reading: Reading) -> None:
        self.reading = reading

    def pane_died(self, dead: bool) -> None:
        self.dead = dead

    def _wanted(self, now: float) -> AgentState:
        if self.dead:
            return AgentState.EXITED
        if self.unreachable:
            return AgentState.UNREACHABLE
        if self.signal is not None and self.signal_at >= self.last_output:
            return self.signal  # the CLI said so, and has drawn nothing since
        seen = self.reading.state
        quiet = not self.streaming and now - self.last_output >= self.quiet_needed
        if seen is None:  # the screen cannot tell: output means work, quiet means idle
            if self.adapter.reads_input_box and self.state is AgentState.STARTING:
                return AgentState.STARTING  # a blank screen before the CLI draws its box
            if quiet:
                return AgentState.IDLE
            return AgentState.STARTING if self.state is AgentState.STARTING else AgentState.WORKING
        return seen

    def signalled(self, state: AgentState, now: float) -> None:
        """A structured signal from the CLI (a hook): believed at once, no settling."""
        self.signal, self.signal_at = state, now
        self.state, self.since, self._candidate = state, now, None

    def _hold(self, wanted: AgentState) -> float:
        if self.signal is not None and wanted is self.signal and self.signal_at >= self.last_output:
            return 0.0
        if wanted is AgentState.UNREACHABLE:
            return 0.0
        if wanted is not AgentState.IDLE:
            return SETTLE
        if self.reading.state is None:
            return 0.0  # idle from quiet time alone has already waited idle_quiet
        # a screen's idle ends a turn once it has held the CLI's quiet time (between two
        # steps of a turn the screen can look idle for a moment); a CLI that has not worked
        # yet has no turn to end: its first prompt holds as long as any other state
        return SETTLE if self.state is AgentState.STARTING else self.adapter.idle_quiet

    def _held_since(self, wanted: AgentState) -> float:
        """Since when the wanted state has held. A screen read after the pane's last output
        has not changed since: the idle it shows has held from that output (a reading that
        came late waits no longer); a muted pane's output times are too coarse for that."""
        if wanted is AgentState.IDLE and self.reading.state is not None and not self.streaming:
            return min(self._candidate_since, self.last_output)
        return self._candidate_since

    def evaluate(self, now: float) -> bool:
        """Commit the wanted state once it has held long enough; True if the state changed."""
        wanted = self._wanted(now)
        if wanted is self.state:
            self._candidate = None
            return False
        if wanted is not self._candidate:
            self._candidate, self._candidate_since = wanted, now
        if wanted is AgentState.EXITED or now - self._held_since(wanted) >= self._hold(wanted):
            self.state, self.since, self._candidate = wanted, now, None
            return True
        return False

    def next_deadline(self) -> float | None:
        """When `evaluate` may next change something without new input, if ever."""
        if self._candidate is not None:
            return self._held_since(self._candidate) + self._hold(self._candidate)
        seen = self.reading.state
        if seen is not None and seen is not self.state and not self.dead:
            return self.since  # the screen already disagrees (e.g. after `typed`): look now
        if (
            self.reading.state is None
            and self.state is not AgentState.IDLE
            and not self.dead
            and not self.streaming
        ):
            return self.last_output + self.quiet_needed
        return None

    def typed(self, now: float) -> None:
        """A message was just submitted: the agent is busy until its screen says otherwise."""
        self.last_output = now
        if self.state is AgentState.IDLE:
            self.state, self.since, self._candidate = AgentState.WORKING, now, None

    def ready_at(self, now: float) -> bool:
        """Input box ready for a message: idle, and, where the CLI draws an input box, the
        latest screen shows it idle (the shown state lags the screen by a moment). A box
        whose surroundings cannot tell (an error line above it, say) is ready once it has
        been quiet for a while: a queue must not wait for a screen that will never change."""
        if self.state is not AgentState.IDLE:
            return False
        if self.adapter.reads_input_box:
            if self.reading.draft is None:
                return False
            if self.reading.state is AgentState.IDLE:
                return True
            return self.reading.state is None and now - self.last_output >= READY_QUIET
        return True  # no readable box: idle (quiet, or the CLI's own signal) is all we know

    @property
    def ready(self) -> bool:
        return self.ready_at(time.monotonic())
