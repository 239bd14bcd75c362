"""The judge pane on every terminal width: docked beside the grid from 160 columns, over the
grid below (opened by J, closed by J or esc), so tiles are never squeezed below their
readable width; resizing across 160 switches between the two and keeps the selected agent
on screen."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import TaskView, VerdictView, Work
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.judge import DOCK_MIN
from swarm_tui.ui.tiles import MIN_TILE_W, AgentTile
from tests.ui.conftest import FakeClient, shown, still_fleet, still_judged, text_of, until


def judged_fleet(tmp: Path) -> FleetView:
    """Sixteen agents (two pages at 120 columns), one of them the judge, with verdicts."""
    tasks = [
        TaskView(
            id=1,
            agent="Gauss",
            spec="Port the parser",
            status="incomplete",
            rounds=1,
            reasons="tests still fail",
        )
    ]
    verdicts = [
        VerdictView(
            task=1, time=1796200000, judge="Judge", verdict="incomplete", reasons="tests still fail"
        )
    ]
    return still_fleet(
        tmp, count=16, work=Work(tasks=tasks, verdicts=verdicts), roles={"Judge": "judge"}
    )


def tile_widths(app: SwarmApp) -> list[int]:
    return [t.outer_size.width for t in app._tiles if t.name_shown is not None and t.display]


async def test_resizing_across_160_columns_switches_docked_and_over(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(judged_fleet(tmp_path)))
    async with app.run_test(size=(200, 55)) as pilot:
        judge = app._judge
        await until(lambda: judge.display and app._laid_out, what="the docked judge pane")
        assert judge.docked and judge.outer_size.width == 48
        app.select_name("Fermat")  # the 13th agent: page 1 of 2 at 120 columns
        await pilot.pause()
        assert "Fermat" in shown(app)
        grid_wide = app._grid.size.width

        # narrower than 160: docked, it would squeeze the tiles; it goes, and the grid widens
        await pilot.resize_terminal(120, 40)
        await until(lambda: not judge.display, what="the judge pane out of the way")
        await until(lambda: app._grid.size.width == 120 - 38, what="the grid's full width")
        assert not judge.docked
        assert "Fermat" in shown(app) and app.current_name() == "Fermat"
        assert min(tile_widths(app)) >= MIN_TILE_W

        # J opens it over the grid: the tiles keep their size underneath
        widths = tile_widths(app)
        await pilot.press("J")
        await until(lambda: judge.display, what="the judge pane over the grid")
        assert judge.region.x == 38 and judge.region.width == 120 - 38
        assert judge.region.height == app._grid.size.height  # the status line stays in sight
        assert tile_widths(app) == widths and app._grid.size.width == 120 - 38
        assert "judge · J or esc closes" in text_of(app.screen)
        assert app.client.shown[-1] >= {"Judge"}  # its screen is wanted while it shows
        await pilot.press("escape")
        await until(lambda: not judge.display, what="esc to close it")
        await pilot.press("J")
        await until(lambda: judge.display, what="J to open it again")
        await pilot.press("J")
        await until(lambda: not judge.display, what="J to close it")

        # open over the grid, then wide again: docked, still in sight, the selection shown
        await pilot.press("J")
        await until(lambda: judge.display, what="the judge pane over the grid")
        await pilot.resize_terminal(DOCK_MIN, 48)
        await until(lambda: judge.docked and judge.display, what="docked at 160 columns")
        await until(lambda: app._grid.size.width == DOCK_MIN - 38 - 48, what="room for it")
        assert min(tile_widths(app)) >= MIN_TILE_W
        assert "Fermat" in shown(app)
        await pilot.resize_terminal(200, 55)
        await until(lambda: app._grid.size.width == grid_wide, what="the wide grid again")
        assert judge.docked and judge.display and "Fermat" in shown(app)


async def test_over_the_grid_the_judge_tile_gets_the_room(tmp_path: Path) -> None:
    """Its agent's window is sized to the pane it is shown in, docked or over the grid."""
    client = FakeClient(judged_fleet(tmp_path))
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        tile = app._judge.query_one(AgentTile)
        await pilot.press("J")
        await until(
            lambda: client.sizes.get("Judge", (0, 0))[0] > 60,
            what="the judge's window sized to the pane",
            detail=lambda: repr(
                (
                    client.sizes.get("Judge"),
                    app._judge.display,
                    tile.name_shown,
                    tile.content_region,
                    app.focused,
                )
            ),
        )
        assert client.sizes["Judge"] == (tile.content_region.width, tile.content_region.height)


def test_judge_shown_over_the_grid_at_120(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = SwarmApp(FakeClient(still_judged(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 40), press=["J"])


def test_judge_docked_at_200(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(SwarmApp(FakeClient(still_judged(tmp_path))), terminal_size=(200, 55))


async def test_a_judge_pane_without_its_contents_is_not_refreshed(tmp_path: Path) -> None:
    """A frame that comes while the app closes (its widgets already removed) finds the pane
    empty: nothing to draw, and no error (it once failed a run at exit)."""
    app = SwarmApp(FakeClient(judged_fleet(tmp_path)))
    async with app.run_test(size=(200, 55)):
        judge = app._judge
        await until(lambda: judge.display and app._laid_out, what="the docked judge pane")
        await judge.remove_children()
        judge.refresh_pane()
        assert not judge.query(AgentTile)
