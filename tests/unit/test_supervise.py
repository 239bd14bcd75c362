"""A supervised loop is started again when it fails or returns, backing off (1 s doubling to
a minute) while it fails at every start, and a failure that repeats is said once per ten
minutes, not at every restart. Time is the test's: each wait moves its clock."""

from __future__ import annotations

import asyncio

import pytest

from swarm_tui.fleet import supervise
from swarm_tui.fleet.supervise import supervised


class Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.waits: list[float] = []
        monkeypatch.setattr(supervise, "_clock", lambda: self.now)
        monkeypatch.setattr(supervise, "_sleep", self.sleep)

    async def sleep(self, secs: float) -> None:
        self.waits.append(secs)
        self.now += secs
        await asyncio.sleep(0)  # (others run meanwhile, as they would)


async def test_a_loop_failing_at_every_start_backs_off_and_is_said_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock(monkeypatch)
    said: list[str] = []
    starts = 0
    forever = asyncio.Event()

    async def loop() -> None:
        nonlocal starts
        starts += 1
        if starts <= 20:
            raise OSError("inotify watch limit reached")
        await forever.wait()

    task = asyncio.create_task(supervised(loop, "the layout's watcher", said.append))
    await asyncio.wait_for(_until(lambda: starts == 21), 5)
    assert clock.waits == [1, 2, 4, 8, 16, 32] + [60] * 14
    # said at the first failure, and again once ten minutes had passed
    assert said == [
        "the layout's watcher failed (OSError('inotify watch limit reached')); restarted",
        "the layout's watcher failed (OSError('inotify watch limit reached')); restarted "
        "(it keeps failing: every 60 s; said again in ten minutes if it goes on)",
    ]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_loop_that_worked_a_while_restarts_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(monkeypatch)
    said: list[str] = []
    starts = 0

    async def loop() -> None:
        nonlocal starts
        starts += 1
        if starts == 3:
            clock.now += 3600  # an hour of work, then the same failure
        if starts <= 3:
            raise RuntimeError("boom")
        await asyncio.Event().wait()

    task = asyncio.create_task(supervised(loop, "GPU readings of node01", said.append))
    await asyncio.wait_for(_until(lambda: starts == 4), 5)
    assert clock.waits == [1, 2, 1]
    assert len(said) == 2  # the first time, and after the hour
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_loop_that_returns_is_restarted_unless_it_may_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Clock(monkeypatch)
    said: list[str] = []
    runs = 0

    async def once() -> None:
        nonlocal runs
        runs += 1

    await supervised(once, "GPU readings of box", said.append, may_end=True)
    assert runs == 1 and said == []
    task = asyncio.create_task(supervised(once, "reminders", said.append))
    await asyncio.wait_for(_until(lambda: runs >= 3), 5)
    task.cancel()
    assert said[0] == "reminders ended by itself; restarted"


async def _until(predicate: object) -> None:
    while not predicate():  # type: ignore[operator]
        await asyncio.sleep(0)


async def test_a_loop_failing_now_and_then_comes_back_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The screen reader failing every 30 s must not climb to a minute's gap (every tile and
    state frozen meanwhile): it did not fail at its start."""
    clock = Clock(monkeypatch)
    starts = 0

    async def loop() -> None:
        nonlocal starts
        starts += 1
        if starts <= 5:
            clock.now += 30  # half a minute of work, then a failure
            raise RuntimeError("boom")
        await asyncio.Event().wait()

    task = asyncio.create_task(supervised(loop, "screen reader", lambda _: None))
    await asyncio.wait_for(_until(lambda: starts == 6), 5)
    assert clock.waits == [1, 1, 1, 1, 1]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
