"""The layout's watcher runs supervised like the engine's other loops: one unexpected error
(watchfiles raising: an inotify limit, a directory briefly gone) stopped it for the night,
said once, and every later edit of the layout was ignored. Now it is said and started again,
and the next edit is applied. The real watcher on a real layout file; watchfiles fails once."""

from __future__ import annotations

import pytest
import watchfiles

from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.notices import Notices

pytestmark = pytest.mark.integration


async def test_the_layout_watcher_survives_an_error(sandbox, start_fleet, monkeypatch) -> None:
    real = watchfiles.awatch
    calls = 0

    def awatch(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError(28, "inotify watch limit reached")
        return real(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "awatch", awatch)
    path = sandbox.layout("watched", mock_agent("Ada", focus="parser"))
    run = await start_fleet(path)
    notes = Notices()
    run.fleet.listener = notes
    run.fleet.watch()
    await async_wait_until(
        lambda: any("the layout's watcher failed" in n and "restarted" in n for n in notes.lines),
        10,
        "the failure said",
        lambda: "\n".join(notes.lines),
    )
    await async_wait_until(lambda: calls == 2, 10, "the watcher started again")
    await run.wait_states("idle")
    sandbox.layout("watched", mock_agent("Ada", focus="parser v2"))
    await async_wait_until(
        lambda: run.fleet.agents["Ada"].focus == "parser v2",
        15,
        "the edit applied",
        lambda: "\n".join(notes.lines),
    )
