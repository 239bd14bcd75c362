"""One duration format everywhere: what the UI and `swarm remind list` print, layouts read."""

from __future__ import annotations

import pytest

from swarm_tui.client import _duration
from swarm_tui.config.work import format_duration, seconds


@pytest.mark.parametrize(
    "secs, text",
    [
        (0, "0s"),
        (45, "45s"),
        (90, "1m30s"),
        (600, "10m"),
        (5400, "1h30m"),
        (7200, "2h"),
        (100800, "1d4h"),
    ],
)
def test_format_and_read_back(secs: int, text: str) -> None:
    assert format_duration(secs) == text
    assert _duration(secs) == text  # the stdlib-only client prints the same
    assert seconds(text) == secs


@pytest.mark.parametrize("bad", ["20", "0.5", "10 minutes", "1h30", "m", ""])
def test_no_unit_or_no_number_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        seconds(bad)


def test_a_minimum_is_enforced() -> None:
    with pytest.raises(ValueError, match="too short"):
        seconds("5s", minimum=10)
    assert seconds("10s", minimum=10) == 10
