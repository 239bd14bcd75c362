"""Loops that must run all night: one that fails is said and started again, backing off while
it fails at every start (1 s, doubling to a minute), and a failure that repeats is said once
per ten minutes, not at every restart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

FIRST_DELAY = 1.0  # seconds before the first restart
MOST_DELAY = 60.0  # the longest wait between restarts
# a loop that ran this long before failing did not fail at its start: it starts again after
# FIRST_DELAY (the screen reader failing once in a while must not wait a minute to come back)
HEALTHY = 5.0
RESAY = 600.0  # seconds before the same failure is said again

_clock, _sleep = time.monotonic, asyncio.sleep  # (a test's own clock replaces both)


async def supervised(
    loop: Callable[[], Awaitable[None]],
    name: str,
    say: Callable[[str], None],
    may_end: bool = False,
) -> None:
    """Run `loop` for ever: restarted when it fails (said, with why) or returns (said; unless
    `may_end`: a loop that knows it has nothing to do, such as GPU readings on a host
    without GPUs, ends there)."""
    delay = FIRST_DELAY
    said: dict[str, float] = {}  # what was said, when
    while True:
        started = _clock()
        try:
            await loop()
            if may_end:
                return
            what = f"{name} ended by itself"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure: tell, restart, go on
            what = f"{name} failed ({exc!r})"
        now = _clock()
        if now - started >= HEALTHY:
            delay = FIRST_DELAY  # it had worked: a new failure, not the same one again
        if now - said.get(what, -RESAY) >= RESAY:
            said[what] = now
            again = (
                ""
                if delay == FIRST_DELAY
                else f" (it keeps failing: every {delay:.0f} s;"
                " said again in ten minutes if it goes on)"
            )
            say(f"{what}; restarted{again}")
        await _sleep(delay)
        delay = min(MOST_DELAY, delay * 2)
