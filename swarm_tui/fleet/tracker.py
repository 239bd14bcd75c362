"""An agent's state from its screen readings, its output times and its pane's life.

A state must hold for a moment before it is shown, so one redraw never makes it flicker;
idle needs the adapter's quiet time. The clock is passed in, so tests control time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swarm_tui.agents.base import Adapter, AgentState, Reading

SETTLE = 0.3  # seconds a non-idle state must hold before it is shown


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

    def __post_init__(self) -> None:
        self.since = self.started
        self.last_output = self.started

    def output(self, now: float) -> None:
        self.last_output = now

    def screen(self, reading: Reading) -> None:
        self.reading = reading

    def pane_died(self, dead: bool) -> None:
        self.dead = dead

    def _wanted(self, now: float) -> AgentState:
        if self.dead:
            return AgentState.EXITED
        if self.signal is not None and self.signal_at >= self.last_output:
            return self.signal  # the CLI said so, and has drawn nothing since
        seen = self.reading.state
        quiet = now - self.last_output >= self.adapter.idle_quiet
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
        if self.signal is not None and wanted is self.signal \
                and self.signal_at >= self.last_output:
            return 0.0
        if wanted is not AgentState.IDLE:
            return SETTLE
        # idle from quiet time alone has already waited idle_quiet; a screen's idle must hold
        return 0.0 if self.reading.state is None else self.adapter.idle_quiet

    def evaluate(self, now: float) -> bool:
        """Commit the wanted state once it has held long enough; True if the state changed."""
        wanted = self._wanted(now)
        if wanted is self.state:
            self._candidate = None
            return False
        if wanted is not self._candidate:
            self._candidate, self._candidate_since = wanted, now
        hold = self._hold(wanted)
        if wanted is AgentState.EXITED or now - self._candidate_since >= hold:
            self.state, self.since, self._candidate = wanted, now, None
            return True
        return False

    def next_deadline(self) -> float | None:
        """When `evaluate` may next change something without new input, if ever."""
        if self._candidate is not None:
            return self._candidate_since + self._hold(self._candidate)
        seen = self.reading.state
        if seen is not None and seen is not self.state and not self.dead:
            return self.since  # the screen already disagrees (e.g. after `typed`): look now
        if self.reading.state is None and self.state is not AgentState.IDLE and not self.dead:
            return self.last_output + self.adapter.idle_quiet
        return None

    def typed(self, now: float) -> None:
        """A message was just submitted: the agent is busy until its screen says otherwise."""
        self.last_output = now
        if self.state is AgentState.IDLE:
            self.state, self.since, self._candidate = AgentState.WORKING, now, None

    @property
    def ready(self) -> bool:
        """Input box ready for a message: idle, and, where the CLI draws an input box, the
        latest screen shows it idle (the shown state lags the screen by a moment)."""
        if self.state is not AgentState.IDLE:
            return False
        if self.adapter.reads_input_box:
            return self.reading.state is AgentState.IDLE and self.reading.draft is not None
        return True  # no readable box: idle (quiet, or the CLI's own signal) is all we know
