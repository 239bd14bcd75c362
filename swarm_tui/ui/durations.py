"""Durations as people read them: 45s, 10m, 1h30m, 2d3h (one format, shared with the CLI
and saved layouts, which `seconds` reads back); and the clocks many rows show at once, which
know when their text next changes, so a fleet at rest is not redrawn to show the same text."""

from __future__ import annotations

import math

from swarm_tui.config.work import format_duration as duration

__all__ = ["Clock", "duration", "glance", "since"]


def since(then: float, now: float) -> str:
    """How long ago `then` was (wall times)."""
    return duration(now - then)


def _step(secs: float) -> int:
    """A glance's resolution: seconds for the first ten, then tens of seconds, then whole
    minutes (hours show minutes too: 1h30m), then whole hours (2d3h)."""
    return 1 if secs < 10 else 10 if secs < 60 else 60 if secs < 86400 else 3600


def glance(then: float, now: float) -> str:
    """`since` for clocks many rows show at once: 7s, 40s, 3m (not 3m45s), 1h30m."""
    return Clock(now).since(then)


class Clock:
    """One moment (`now`, wall time) for a set of rows being built, and the earliest moment
    at which any clock read through it shows a different text (`due`): until then, building
    the rows again would give the same text."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.due = math.inf

    def since(self, then: float) -> str:
        """A glance at how long ago `then` was: 7s, 40s, 3m, 1h30m."""
        secs = max(0.0, self.now - then)
        step = _step(secs)
        shown = secs - secs % step
        self.due = min(self.due, then + shown + step)
        return duration(shown)

    def left(self, secs: float) -> str:
        """A glance at a countdown with `secs` to go, rounded down the same way (`1m` with
        72 s left, `50s` with 55, seconds in the last ten)."""
        secs = max(0.0, secs)
        step = _step(secs)
        shown = secs - secs % step
        if secs > 0:  # the text changes once less than `shown` is left (0s stays)
            self.due = min(self.due, self.now + (secs - shown) + 0.001)
        return duration(shown)
