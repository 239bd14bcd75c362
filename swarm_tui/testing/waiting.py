"""Wait on conditions, never on fixed sleeps: poll a predicate until a deadline.

`wait_until` / `async_wait_until` return the predicate's first truthy value, or fail with a
message that says what was awaited, for how long, what the predicate last returned and, if
given, a `detail()` such as the agent's screen. `holds` / `async_holds` check the opposite: a
condition stays true for a whole period (e.g. a message stays queued while its agent is busy).
A predicate may raise AssertionError to fail at once when an invariant breaks.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

POLL = 0.05  # seconds between polls: far below any timing the tests assert on


class WaitTimeout(AssertionError):
    """A condition was not met in time (an AssertionError, so pytest shows it as a failure)."""


def _message(what: str, timeout: float, last: object, detail: Callable[[], str] | None) -> str:
    text = f"timed out after {timeout:.1f} s waiting for {what} (last value: {last!r})"
    if detail is not None:
        try:
            text += "\n" + detail()
        except Exception as exc:  # noqa: BLE001 - diagnostics must never hide the timeout
            text += f"\n(detail unavailable: {exc!r})"
    return text


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    what: str = "condition",
    detail: Callable[[], str] | None = None,
    interval: float = POLL,
) -> T:
    """Poll `predicate` until it returns something truthy; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise WaitTimeout(_message(what, timeout, last, detail))
        time.sleep(interval)


async def async_wait_until(
    predicate: Callable[[], Any],
    timeout: float = 10.0,
    what: str = "condition",
    detail: Callable[[], str] | None = None,
    interval: float = POLL,
) -> Any:
    """Like `wait_until`, without blocking the event loop; `predicate` may be a coroutine."""
    deadline = time.monotonic() + timeout
    while True:
        last = predicate()
        if inspect.isawaitable(last):
            last = await last
        if last:
            return last
        if time.monotonic() >= deadline:
            raise WaitTimeout(_message(what, timeout, last, detail))
        await asyncio.sleep(interval)


def holds(
    predicate: Callable[[], object],
    duration: float,
    what: str = "condition",
    detail: Callable[[], str] | None = None,
    interval: float = POLL,
) -> None:
    """Fail as soon as `predicate` is falsy during the next `duration` seconds."""
    end = time.monotonic() + duration
    while time.monotonic() < end:
        value = predicate()
        if not value:
            raise AssertionError(
                _message(f"{what} to hold", duration, value, detail).replace(
                    "timed out after", "stopped holding within"
                )
            )
        time.sleep(interval)


async def async_holds(
    predicate: Callable[[], object | Awaitable[object]],
    duration: float,
    what: str = "condition",
    detail: Callable[[], str] | None = None,
    interval: float = POLL,
) -> None:
    """Like `holds`, without blocking the event loop."""
    end = time.monotonic() + duration
    while time.monotonic() < end:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if not value:
            raise AssertionError(
                _message(f"{what} to hold", duration, value, detail).replace(
                    "timed out after", "stopped holding within"
                )
            )
        await asyncio.sleep(interval)
