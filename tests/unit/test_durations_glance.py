"""A clock knows when its text next changes: forward clocks at 1 s, then 10 s, then 1 min
resolution; countdowns rounded down the same way. Checked a millisecond either side of each
change."""

from __future__ import annotations

import math

import pytest

from swarm_tui.ui.durations import Clock, glance

T0 = 1_800_000_000.0


@pytest.mark.parametrize(
    ("ago", "text", "changes_at"),
    [
        (0.0, "0s", 1.0),
        (7.2, "7s", 8.0),
        (9.9, "9s", 10.0),
        (10.0, "10s", 20.0),
        (59.0, "50s", 60.0),
        (60.0, "1m", 120.0),
        (3599.0, "59m", 3600.0),
        (3600.0 + 125, "1h2m", 3600.0 + 180),
    ],
)
def test_a_forward_clock_knows_its_next_text(ago: float, text: str, changes_at: float) -> None:
    clock = Clock(T0 + ago)
    assert clock.since(T0) == text
    assert clock.due == pytest.approx(T0 + changes_at)
    assert glance(T0, clock.due - 0.001) == text
    assert glance(T0, clock.due + 0.001) != text


@pytest.mark.parametrize(
    ("left", "text"),
    [
        (72.0, "1m"),
        (60.0, "1m"),
        (55.0, "50s"),
        (10.0, "10s"),
        (9.5, "9s"),
        (3 * 3600 + 12 * 60 + 5, "3h12m"),
    ],
)
def test_a_countdown_knows_its_next_text(left: float, text: str) -> None:
    clock = Clock(T0)
    assert clock.left(left) == text
    elapsed = clock.due - T0
    assert Clock(T0).left(left - elapsed + 0.0015) == text  # just before: the same
    assert Clock(T0).left(left - elapsed - 0.001) != text


def test_a_countdown_stops_at_0s() -> None:
    clock = Clock(T0)
    assert clock.left(0.5) == "0s"
    assert clock.due == pytest.approx(T0 + 0.501)  # (the text it shows then: 0s again)
    clock = Clock(T0)
    assert clock.left(0.0) == "0s"
    assert clock.due == math.inf


def test_the_earliest_change_wins() -> None:
    clock = Clock(T0 + 125.0)
    clock.since(T0)  # 2m, changes at 180 s
    clock.since(T0 + 120.0)  # 5s, changes at 6 s
    assert clock.due == pytest.approx(T0 + 126.0)


def test_glance_drops_seconds_after_the_first_minute() -> None:
    assert glance(0, 7.5) == "7s"
    assert glance(0, 45) == "40s"  # tens of seconds after the first ten
    assert glance(0, 59.9) == "50s"
    assert glance(0, 60) == "1m"
    assert glance(0, 225) == "3m"  # not 3m45s: the row is redrawn once a minute
    assert glance(0, 3599) == "59m"
    assert glance(0, 5400 + 59) == "1h30m"
    assert glance(10, 0) == "0s"  # a clock a little ahead


def test_a_clock_of_days_moves_by_the_hour() -> None:
    clock = Clock(T0 + 2 * 86400 + 3 * 3600 + 125)
    assert clock.since(T0) == "2d3h"
    assert clock.due == pytest.approx(T0 + 2 * 86400 + 4 * 3600)
