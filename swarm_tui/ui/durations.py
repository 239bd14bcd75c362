"""Durations as people read them: 45s, 10m, 1h30m, 2d3h (one format, shared with the CLI
and saved layouts, which `seconds` reads back)."""

from __future__ import annotations

from swarm_tui.config.work import format_duration as duration

__all__ = ["duration", "glance", "since"]


def since(then: float, now: float) -> str:
    """How long ago `then` was (wall times)."""
    return duration(now - then)


def glance(then: float, now: float) -> str:
    """`since` for clocks many rows show at once: seconds for the first ten, then tens of
    seconds, then whole minutes (3m, not 3m45s), then hours and minutes, so a fleet at
    rest redraws a row every ten seconds at most, not every row every second."""
    secs = max(0.0, now - then)
    step = 1 if secs < 10 else 10 if secs < 60 else 60 if secs < 3600 else 1
    return duration(secs - secs % step)
