"""The view draws what changes and nothing else: a tile follows a scrolling screen row by row
(each row rendered once and reused as it moves up, redrawn when its style changes), and
while nothing arrives the view does not wake at all."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from textual.screen import Screen

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.compositor import FleetScreen
from swarm_tui.ui.help import HelpScreen
from swarm_tui.ui.sidebar import Sidebar
from tests.ui.conftest import FakeClient, still_fleet, text_of, until


class Counting(SwarmApp):
    """The app, counting its frames (each run of the batched redraw)."""

    frames = 0

    def _draw_changes(self) -> None:
        self.frames += 1
        super()._draw_changes()


def _numbers(tile_text: str) -> list[int]:
    return [int(n) for n in re.findall(r"line (\d+)", tile_text)]


async def test_a_tile_follows_a_scrolling_screen_and_redraws_on_a_new_style(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=2))
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        tile = app._tiles[0]
        await until(lambda: tile.name_shown is not None, what="the first tile laid out")
        name = tile.name_shown
        assert name is not None
        for n in range(40):  # an agent printing a line at a time: every row moves up
            app.view.screens[name] = [f"line {i}" for i in range(n + 1)][-12:]
            app.bridge.screen_changed(name)
            await until(
                lambda n=n: _numbers(text_of(tile))[-1:] == [n],
                what=f"line {n} at the bottom of the tile",
                detail=lambda: text_of(tile),
            )
        assert _numbers(text_of(tile)) == list(range(28, 40)), text_of(tile)
        # the same rows under another border: selected (double) -> not selected (round)
        assert text_of(tile).startswith("╔")
        await pilot.press("right")
        await until(
            lambda: text_of(tile).startswith("╭"),
            what="the tile's border redrawn",
            detail=lambda: text_of(tile),
        )
        assert _numbers(text_of(tile)) == list(range(28, 40))


async def test_the_view_sleeps_while_nothing_changes_and_draws_a_change_at_once(
    tmp_path: Path,
) -> None:
    app = Counting(FakeClient(still_fleet(tmp_path, count=4)))
    async with app.run_test(size=(120, 40)):
        await until(
            lambda: app.frames > 0 and not app._frame._active.is_set(),
            what="the frame timer to go to sleep",
        )
        before = app.frames
        await asyncio.sleep(1.0)  # a measured window of quiet, not a synchronisation
        assert app.frames - before <= 1, f"{app.frames - before} frames in 1 s of quiet"
        tile = app._tiles[1]
        assert tile.name_shown is not None  # laid out before the timer slept
        app.view.screens[tile.name_shown] = ["woken by a new screen"]
        app.bridge.screen_changed(tile.name_shown)  # straight to its tile
        await until(
            lambda: "woken by a new screen" in text_of(tile),
            timeout=1.0,
            what="the change drawn without waiting for a poll",
        )
        app.bridge.notice("woken by a notice")  # through the sleeping frame timer
        await until(
            lambda: any("woken by a notice" in n.message for n in app._notifications),
            timeout=1.0,
            what="the timer woken by the change",
        )


async def test_a_new_screen_reaches_the_terminal_also_under_a_dialog(tmp_path: Path) -> None:
    """A tile's new screen makes the next frame due at once and is written to the terminal
    then (the fleet screen's short redraw); under a dialog (help) the tile still takes it,
    and shows it when the dialog closes."""
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=4)))
    written: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        display = app._display

        def recorded(screen: Screen[object], update: object) -> None:
            if update is not None:
                written.append(update.render_segments(app.console))  # type: ignore[attr-defined]
            display(screen, update)  # type: ignore[arg-type]

        app._display = recorded  # type: ignore[method-assign]
        tile = app._tiles[2]
        await until(lambda: tile.name_shown is not None and tile.region, what="a tile laid out")
        name = tile.name_shown
        assert name is not None and isinstance(app.screen, FleetScreen)
        screen = app.screen
        for n in range(3):
            await until(
                lambda: (
                    not screen._update_timer._active.is_set() and not app._batch_count
                ),  # (a widget being recomposed holds frames)
                what="no frame due (the frame timer asleep)",
            )
            app.view.screens[name] = [f"printed line {i}" for i in range(n + 1)]
            app.bridge.screen_changed(name)
            # due at once: no round of Idle and Update messages first
            assert tile in screen._dirty_widgets and screen._update_timer._active.is_set()
            await until(lambda: not screen._update_timer._active.is_set(), what="that frame drawn")
            assert any(f"printed line {n}" in w for w in written), "".join(written)[-400:]
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        app.view.screens[name] = ["printed under the dialog"]
        app.bridge.screen_changed(name)
        await until(
            lambda: "printed under the dialog" in text_of(tile),
            what="the tile updated under the dialog",
        )
        await pilot.press("escape")
        await until(lambda: isinstance(app.screen, FleetScreen), what="the dialog closed")
        await until(
            lambda: "printed under the dialog" in text_of(app.screen),
            what="the tile shown with what came under the dialog",
            detail=lambda: text_of(app.screen),
        )


async def test_the_sidebar_keeps_the_selected_agent_in_view(tmp_path: Path) -> None:
    """16 agents in a 24-row terminal: the sidebar shows about half; selecting the last one
    scrolls it into view (only the rows on screen are drawn)."""
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=16)))
    async with app.run_test(size=(120, 24)) as pilot:
        sidebar = app.query_one(Sidebar)
        await until(lambda: "Gauss" in text_of(sidebar), what="the first agent listed")
        assert "Laplace" not in text_of(sidebar)  # the last is below the fold
        for _ in range(15):
            await pilot.press("right")
        await until(lambda: app.current_name() == "Laplace", what="the last agent selected")
        await until(
            lambda: "Laplace" in text_of(sidebar),
            what="the sidebar scrolled to it",
            detail=lambda: text_of(sidebar),
        )
        assert "Gauss" not in text_of(sidebar)


async def test_the_layout_follows_the_terminal_and_b_hides_the_sidebar(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=16)))
    async with app.run_test(size=(80, 24)) as pilot:
        sidebar = app.query_one(Sidebar)
        await until(lambda: app.cols >= 1 and app._laid_out, what="the first layout")
        assert sidebar.outer_size.width == 24 and app.cols == 1  # narrow sidebar, one column
        await pilot.press("b")
        await until(
            lambda: not sidebar.display and app._grid.size.width == 80,
            what="the grid's full width without the sidebar",
            detail=lambda: f"cols {app.cols}, sidebar shown {sidebar.display}",
        )
        # still one column: two would be 40 wide, narrower than a mock's 44-column window
        assert app.cols == 1
        assert all(t.outer_size.width >= 46 for t in app._tiles if t.display)
        status = str(app._status.render())
        assert "3 need you" in status and "2 exited" in status, status
        await pilot.press("b")
        await until(lambda: sidebar.display, what="the sidebar back")
        await pilot.resize_terminal(200, 55)
        await until(
            lambda: sidebar.outer_size.width == 38 and app.cols == 3,
            what="the wide layout",
            detail=lambda: f"{sidebar.outer_size} {app.cols}",
        )
        assert app.page < app.pages


async def test_a_filter_shows_only_matching_agents_and_g_jumps_to_one(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=16))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        sidebar = app.query_one(Sidebar)
        await until(lambda: app._laid_out, what="the first layout")
        await pilot.press("slash", *"needs-permission", "enter")
        waiting = [n for n, a in app.view.agents.items() if a.state == "needs-permission"]
        await until(
            lambda: app.order == waiting,
            what="only the agents that need you",
            detail=lambda: repr(app.order),
        )
        assert {t.name_shown for t in app._tiles if t.display} == set(waiting)
        assert "Gauss" not in text_of(sidebar) and waiting[0] in text_of(sidebar)
        assert f"filter 'needs-permission': {len(waiting)} shown" in str(app._status.render())
        # the prompt's "all agents" is still the whole fleet, not the filtered few
        await pilot.press("a", *"everyone", "enter")
        await until(lambda: client.asked("send"), what="the send to all")
        assert len(client.asked("send")[0]["names"]) == 16
        await pilot.press("g", *"lap", "enter")  # Laplace is filtered out: all shown again
        await until(lambda: app.current_name() == "Laplace", what="Laplace selected")
        assert app.filter == "" and len(app.order) == 16
        await pilot.press("slash", "ctrl+u", "enter")  # an empty filter: everyone
        await until(lambda: len(app.order) == 16, what="all agents back")
