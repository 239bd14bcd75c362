"""Clocks many rows show at once tick every second only in their first ten seconds."""

from __future__ import annotations

from swarm_tui.ui.durations import glance


def test_glance_drops_seconds_after_the_first_minute() -> None:
    assert glance(0, 7.5) == "7s"
    assert glance(0, 45) == "40s"  # tens of seconds after the first ten
    assert glance(0, 59.9) == "50s"
    assert glance(0, 60) == "1m"
    assert glance(0, 225) == "3m"  # not 3m45s: the row is redrawn once a minute
    assert glance(0, 3599) == "59m"
    assert glance(0, 5400 + 59) == "1h30m"
    assert glance(10, 0) == "0s"  # a clock a little ahead
