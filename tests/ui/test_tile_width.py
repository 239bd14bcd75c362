"""Tiles are never narrower than the agents' windows: the engine keeps each window at its
adapter's `min_window` at least, so a narrower tile would cut the agent's screen off on the
right; a page holds fewer tiles instead."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.agents.registry import ADAPTERS
from swarm_tui.protocol.client import FleetView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.grid import MIN_WINDOW_W, OTHER_WINDOW_W, min_tile_width
from swarm_tui.ui.tiles import MIN_TILE_W, AgentTile
from tests.ui.conftest import FakeClient, shown, still_fleet, until


def test_the_views_table_mirrors_every_adapters_min_window() -> None:
    for cli, adapter in ADAPTERS.items():
        assert MIN_WINDOW_W.get(cli, OTHER_WINDOW_W) == adapter.min_window[0], cli


def test_the_narrowest_tile_follows_the_widest_cli() -> None:
    assert min_tile_width(["mock"]) == 46  # 44 columns and the two borders
    assert min_tile_width(["claude", "mock"]) == 46
    assert min_tile_width(["generic"]) == MIN_TILE_W  # never below the readable width
    assert min_tile_width(["mock", "codex"]) == 62  # an 80-column CLI: capped, two fit
    assert min_tile_width(["some-cli-this-view-never-met"]) == 62
    assert min_tile_width([]) == MIN_TILE_W


def with_cli(view: FleetView, cli: str, *names: str) -> FleetView:
    for name in names:
        view.agents[name] = view.agents[name].model_copy(update={"cli": cli})
    return view


def content_widths(app: SwarmApp) -> list[int]:
    return [t.content_region.width for t in app._tiles if t.name_shown and t.display]


async def test_every_tile_holds_a_whole_mock_window_at_every_size(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=16))
    app = SwarmApp(client)
    async with app.run_test(size=(80, 24)) as pilot:
        for size in ((80, 24), (120, 40), (200, 55), (300, 80)):
            await pilot.resize_terminal(*size)
            await until(
                lambda s=size: app._laid_out and tuple(app.size) == s, what=f"laid out at {size}"
            )
            await until(
                lambda: set(client.sizes) == set(shown(app)),
                what="the shown tiles' sizes said to the engine",
            )
            assert min(content_widths(app)) >= 44, (size, app.cols, content_widths(app))
            assert min(w for w, _ in client.sizes.values()) >= 44, (size, client.sizes)
            assert app.pages == -(-16 // (app.cols * app.rows))


async def test_an_80_column_cli_gets_wider_tiles_and_a_resize_keeps_the_selection(
    tmp_path: Path,
) -> None:
    app = SwarmApp(FakeClient(with_cli(still_fleet(tmp_path, count=16), "codex", "Euler")))
    async with app.run_test(size=(200, 55)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        assert app.cols == 2 and min(content_widths(app)) >= 60  # 162 columns: two of 81
        app.select_name("Galois")
        await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await until(lambda: app._grid.size.width == 120 - 38, what="the narrower grid")
        await until(lambda: "Galois" in shown(app), what="the selected agent still shown")
        assert app.cols == 1 and app.current_name() == "Galois"
        tile = next(t for t in app._tiles if t.name_shown == "Galois")
        assert isinstance(tile, AgentTile) and tile.outer_size.width == 120 - 38
