"""The sidebar's once-a-second tick builds its rows again only when one of its clocks shows a
new text (or its width or theme changed): a fleet at rest is not redrawn to show the same
text, and every clock still moves on its own: a quiet agent's 7s becomes 10s, a reminder's
countdown at 72 s reads 1m and then 50s. The app's wall clock is replaced by one the test
moves; each tick is the app's own timer callback, called when the test has moved the clock."""

from __future__ import annotations

import time
import types
from pathlib import Path

import pytest

import swarm_tui.protocol.client as client_module
import swarm_tui.ui.app as app_module
from swarm_tui.protocol.models import Work
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.sidebar import Sidebar
from tests.ui.conftest import FakeClient, still_fleet, text_of, until


class Wall:
    """The app's and the view's `time`, with one clock the test moves (the view extrapolates
    reminders' countdowns with it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, now: float | None = None) -> None:
        self.now = time.time() if now is None else now
        moved = types.SimpleNamespace(time=lambda: self.now, monotonic=lambda: self.now)
        monkeypatch.setattr(app_module, "time", moved)
        monkeypatch.setattr(client_module, "time", moved)


def row_of(app: SwarmApp, name: str) -> str:
    rows = text_of(app.query_one(Sidebar)).splitlines()
    return next((ln for ln in rows if f" {name} " in ln), "")


def counting(sidebar: Sidebar, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    builds: list[int] = []
    real = sidebar.show

    def show(*args: object, **kwargs: object) -> None:
        builds.append(1)
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sidebar, "show", show)
    return builds


async def test_a_fleet_at_rest_is_not_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = still_fleet(tmp_path)
    wall = Wall(monkeypatch, view.agents["Gauss"].last_output + 7350)  # every clock: 2h2m
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(lambda: " Gauss " in text_of(app.query_one(Sidebar)), what="the sidebar")
        await pilot.pause()
        app._tick_sidebar()  # the first tick may still see the first layout's width
        builds = counting(app._sidebar, monkeypatch)
        for _ in range(3):
            wall.now += 1.0
            app._tick_sidebar()
        assert builds == []
        wall.now += 60.0  # a minute on: every `2h2m` is now `2h3m`
        app._tick_sidebar()
        assert builds == [1]
        assert "2h3m" in row_of(app, "Gauss")


async def test_a_clock_in_its_first_seconds_moves_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wall = Wall(monkeypatch)
    view = still_fleet(tmp_path)
    hilbert = view.agents["Hilbert"]  # idle
    view.agents["Hilbert"] = hilbert.model_copy(
        update={"last_output": wall.now - 7.2, "state_since": wall.now - 7.2}
    )
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(
            lambda: "idle 7s" in row_of(app, "Hilbert"),
            what="idle 7s",
            detail=lambda: row_of(app, "Hilbert"),
        )
        await pilot.pause()
        wall.now += 1.0
        app._tick_sidebar()
        await until(
            lambda: "idle 8s" in row_of(app, "Hilbert"),
            what="idle 8s",
            detail=lambda: row_of(app, "Hilbert"),
        )
        wall.now += 2.0
        app._tick_sidebar()
        await until(
            lambda: "idle 10s" in row_of(app, "Hilbert"),
            what="idle 10s",
            detail=lambda: row_of(app, "Hilbert"),
        )
        builds = counting(app._sidebar, monkeypatch)
        wall.now += 5.0  # 15 s: still `10s`
        app._tick_sidebar()
        assert builds == []


async def test_a_reminder_countdown_moves_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wall = Wall(monkeypatch)
    view = still_fleet(tmp_path, work=Work(countdowns={"Gauss": 72.0}))
    view._work_at = wall.now  # the countdowns were read now
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(160, 48)) as pilot:
        sidebar = app.query_one(Sidebar)
        await until(
            lambda: "⏰ 1m" in text_of(sidebar), what="⏰ 1m", detail=lambda: text_of(sidebar)
        )
        await pilot.pause()
        wall.now += 22.0
        app._tick_sidebar()
        await until(
            lambda: "⏰ 50s" in text_of(sidebar), what="⏰ 50s", detail=lambda: text_of(sidebar)
        )


async def test_a_resized_sidebar_is_built_for_its_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Wall(monkeypatch)
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    async with app.run_test(size=(200, 55)) as pilot:
        sidebar = app.query_one(Sidebar)
        await until(lambda: " Gauss " in text_of(sidebar), what="the sidebar")
        wide = sidebar.virtual_size.width
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        app._tick_sidebar()
        await pilot.pause()
        assert sidebar.virtual_size.width < wide
        assert sidebar.virtual_size.width <= sidebar.scrollable_content_region.width
