"""Durations as people read them: 45s, 10m, 1h30m, 2d3h."""

from __future__ import annotations

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def duration(secs: float) -> str:
    """The largest unit and the next one when not zero: 45s, 1m30s, 10m, 1h30m, 2h, 1d4h.
    Negative durations read as 0s; fractions of a second are dropped."""
    left = max(0, int(secs))
    for i, (unit, size) in enumerate(UNITS):
        if left >= size or unit == "s":
            big, rest = divmod(left, size)
            text = f"{big}{unit}"
            if i + 1 < len(UNITS):
                small_unit, small_size = UNITS[i + 1]
                if rest // small_size:
                    text += f"{rest // small_size}{small_unit}"
            return text
    raise AssertionError("unreachable: the last unit takes any duration")


def since(then: float, now: float) -> str:
    """How long ago `then` was (wall times)."""
    return duration(now - then)
