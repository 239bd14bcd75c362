"""The layout's watcher runs supervised like the engine's other loops: one unexpected error
(watchfiles raising: an inotify limit, a directory briefly gone) stopped it for the night,
said once, and every later edit of the layout was ignored. Now it is said and started again;
an edit saved while it was down is applied when it comes back, and later edits as before.
The real watcher on a real layout file; watchfiles fails once."""

from __future__ import annotations

import asyncio

import pytest
import watchfiles

from swarm_tui.fleet import supervise
from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.notices import Notices
from swarm_tui.testing.waiting import WaitTimeout

pytestmark = pytest.mark.integration


async def test_the_layout_watcher_survives_an_error(sandbox, start_fleet, monkeypatch) -> None:
    real, real_sleep = watchfiles.awatch, supervise._sleep
    calls = 0
    edited = asyncio.Event()

    def awatch(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError(28, "inotify watch limit reached")
        return real(*args, **kwargs)

    async def restart_after_the_edit(secs: float) -> None:
        await edited.wait()  # the watcher is down until the test has saved its edit
        await real_sleep(0)

    monkeypatch.setattr(watchfiles, "awatch", awatch)
    monkeypatch.setattr(supervise, "_sleep", restart_after_the_edit)
    path = sandbox.layout("watched", mock_agent("Ada", focus="parser"))
    run = await start_fleet(path)
    await run.wait_states("idle")
    notes = Notices()
    run.fleet.listener = notes
    run.fleet.watch()
    await async_wait_until(
        lambda: any("the layout's watcher failed" in n and "restarted" in n for n in notes.lines),
        10,
        "the failure said",
        lambda: "\n".join(notes.lines),
    )
    sandbox.layout("watched", mock_agent("Ada", focus="parser v2"))  # saved while it is down
    edited.set()
    await async_wait_until(
        lambda: run.fleet.agents["Ada"].focus == "parser v2",
        15,
        "the edit made while it was down applied",
        lambda: "\n".join(notes.lines),
    )
    await async_wait_until(lambda: calls == 2, 10, "the watcher started again")
    # (saved again until seen: nothing says when the restarted watcher's inotify is set up)
    for attempt in range(5):
        sandbox.layout("watched", mock_agent("Ada", focus=f"parser v3.{attempt}"))
        try:
            await async_wait_until(
                lambda: run.fleet.agents["Ada"].focus.startswith("parser v3"), 3, "applied"
            )
            break
        except WaitTimeout:
            continue
    assert run.fleet.agents["Ada"].focus.startswith("parser v3"), "\n".join(notes.lines)
    assert not any("restarted with its new launch" in n for n in notes.lines)
