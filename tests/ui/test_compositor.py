"""A frame with tiles changed far apart is drawn area by area: the same cells reach the
terminal as with Textual's own compositor, and the tiles in between are not rendered."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, Compositor, LayoutUpdate
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets._toast import Toast

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.compositor import AreaCompositor, AreaUpdates, RowsUpdate, areas
from swarm_tui.ui.tiles import AgentTile
from tests.ui.conftest import FakeClient, still_fleet, until

_SEQ = re.compile(r"\x1b\[(\d+);(\d+)H|\x1b\[([0-9;]*)m|\x1b\[[0-9;?]*[A-Za-z]|\r|\n")


def cells(sequence: str) -> dict[tuple[int, int], tuple[str, str]]:
    """What a terminal shows after `sequence`, cell by cell: (row, col) -> (char, SGR)."""
    out: dict[tuple[int, int], tuple[str, str]] = {}
    y = x = 0
    style = ""
    pos = 0
    for m in _SEQ.finditer(sequence):
        for ch in sequence[pos : m.start()]:
            out[(y, x)] = (ch, style)
            x += 1
        pos = m.end()
        if m[1]:
            y, x = int(m[1]) - 1, int(m[2]) - 1
        elif m[3] is not None:
            style = "" if m[3] in ("", "0") else m[3]
    for ch in sequence[pos:]:
        out[(y, x)] = (ch, style)
        x += 1
    return out


def sorted_cells(sequence: str) -> list[tuple[str, str]]:
    """The cells `sequence` draws, in reading order."""
    drawn = cells(sequence)
    return [drawn[k] for k in sorted(drawn)]


def test_areas_keep_tiles_apart_and_merge_what_overlaps() -> None:
    a, b = Region(0, 0, 10, 5), Region(10, 0, 10, 5)  # side by side: two areas
    assert areas([a, b]) == [a, b]
    c = Region(5, 2, 10, 2)  # overlaps both: one area around the three
    assert areas([a, b, c]) == [Region(0, 0, 20, 5)]
    far = Region(50, 30, 4, 4)
    assert areas([far, a, Region(0, 0, 0, 0)]) == [a, far]


def test_a_tiles_rows_are_written_as_textual_writes_them() -> None:
    """Rows written in place are the bytes Textual's LayoutUpdate writes (plain, styled,
    wide characters; at the screen's corner and inside it)."""
    console = Console(color_system="truecolor", force_terminal=True, width=200)
    rows = [
        [Strip([Segment("plain row   ")])],
        [
            Strip(
                [
                    Segment("bold ", Style(bold=True)),
                    Segment("red", Style(color="red")),
                    Segment(" 日本", Style(bgcolor="#102030")),
                ]
            )
        ],
        [Strip([Segment(" " * 12, Style(bgcolor="blue"))])],
    ]
    for region in (Region(0, 0, 12, 3), Region(37, 14, 12, 3)):
        ours = RowsUpdate(rows, region).render_segments(console)
        assert ours == LayoutUpdate(rows, region).render_segments(console)
        assert ours.startswith(f"\x1b[{region.y + 1};{region.x + 1}H")


async def test_two_far_tiles_are_drawn_alone_and_the_same(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=12)))
    async with app.run_test(size=(160, 48), notifications=True):

        def shown() -> list[AgentTile]:
            return [t for t in app._tiles if t.name_shown is not None and t.region]

        await until(lambda: len(shown()) >= 9, what="nine tiles laid out")
        tiles = shown()
        compositor = app.screen._compositor
        assert isinstance(compositor, AreaCompositor)
        first, last = tiles[0], tiles[-1]
        middle = tiles[len(tiles) // 2]
        assert not first.region.overlaps(last.region)
        for tile in (first, last):
            assert tile.name_shown is not None
            app.view.screens[tile.name_shown] = [
                f"{tile.name_shown} new line {i}" for i in range(30)
            ]
            tile.update_screen()
        calls = []
        original = middle.render_lines
        middle.render_lines = lambda crop: calls.append(crop) or original(crop)  # type: ignore[method-assign]

        def drawn(render: object) -> tuple[str, int]:
            calls.clear()
            compositor._dirty_regions.clear()
            compositor._dirty_regions.update({first.region, last.region})
            update = render()  # type: ignore[operator]
            assert update is not None
            return update.render_segments(app.console), len(calls)

        ours, ours_middle = drawn(compositor.render_partial_update)
        textuals, textuals_middle = drawn(lambda: Compositor.render_partial_update(compositor))
        assert cells(ours) == cells(textuals)
        assert f"{first.name_shown} new line 29" in ours
        assert f"{last.name_shown} new line 29" in ours
        assert ours_middle == 0 and textuals_middle > 0
        compositor._dirty_regions.update({first.region, last.region})
        update = compositor.render_partial_update()
        assert isinstance(update, AreaUpdates)  # each tile drawn as its rows, uncut
        assert [type(u) for u in update.updates] == [RowsUpdate, RowsUpdate]

        # a notification over the last tile: that area is cut and joined (the toast on top)
        app.notify("a toast over the corner tile " * 3, timeout=30)
        await until(
            lambda: any(t.region.overlaps(last.region) for t in app.screen.query(Toast)),
            what="a toast on the tile",
            detail=lambda: f"{[t.region for t in app.screen.query(Toast)]} {last.region}",
        )
        ours, _ = drawn(compositor.render_partial_update)
        textuals, _ = drawn(lambda: Compositor.render_partial_update(compositor))
        assert cells(ours) == cells(textuals)
        compositor._dirty_regions.update({first.region, last.region})
        update = compositor.render_partial_update()
        assert isinstance(update, AreaUpdates)
        assert [type(u) for u in update.updates] == [RowsUpdate, ChopsUpdate]
