"""Durations as people read them: 45s, 10m, 1h30m, 2d3h (one format, shared with the CLI
and saved layouts, which `seconds` reads back)."""

from __future__ import annotations

from swarm_tui.config.work import format_duration as duration

__all__ = ["duration", "since"]


def since(then: float, now: float) -> str:
    """How long ago `then` was (wall times)."""
    return duration(now - then)
