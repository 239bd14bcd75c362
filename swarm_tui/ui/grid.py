"""How the view shares its room: the sidebar's width, and a page of tiles in columns and
rows.

The engine never makes an agent's window narrower than its CLI is read at (its adapter's
`min_window`), whatever the tile; a tile narrower than that window cuts the agent's screen
off on the right. So tiles are at least as wide as the widest such window among the agents
they show, and a page holds fewer of them instead."""

from __future__ import annotations

from collections.abc import Iterable

from textual.css.scalar import Unit
from textual.widget import Widget

from swarm_tui.ui.tiles import MIN_TILE_H, MIN_TILE_W

SIDEBAR_WIDE, SIDEBAR_MID, SIDEBAR_NARROW = 38, 30, 24  # cells, by terminal width

MAX_PER_PAGE = 25
MAX_COLS = MAX_ROWS = 5
WIDEST_MIN = 62  # a CLI that needs 80 columns still shares the width with another tile
BORDERS = 2  # a tile's left and right border
# the narrowest window each CLI is read in: the adapters' `min_window` widths
# (swarm_tui/agents/*.py), mirrored because the view sees the engine only through the
# protocol, whose AgentView carries the CLI's name but not its window (a test compares them)
MIN_WINDOW_W = {"mock": 44, "claude": 44, "generic": 20}
OTHER_WINDOW_W = 80  # every other adapter's (agents/base.py), and a CLI this view never met


def min_tile_width(clis: Iterable[str]) -> int:
    """The narrowest tile that shows the whole screen of an agent of each of these CLIs."""
    widest = max((MIN_WINDOW_W.get(cli, OTHER_WINDOW_W) for cli in clis), default=0)
    return max(MIN_TILE_W, min(WIDEST_MIN, widest + BORDERS))


def grid_shape(width: int, height: int, agents: int, min_width: int) -> tuple[int, int]:
    """Columns and rows for a grid `width` x `height` cells, tiles at least `min_width`
    wide, with no empty row or column on a fleet of `agents` smaller than a page."""
    cols = max(1, min(MAX_COLS, width // min_width))
    rows = max(1, min(MAX_ROWS, height // MIN_TILE_H))
    while cols * rows > MAX_PER_PAGE:
        rows -= 1
    while rows > 1 and cols * (rows - 1) >= agents:
        rows -= 1
    while cols > 1 and (cols - 1) * rows >= agents:
        cols -= 1
    return cols, rows


def sidebar_width(terminal: int) -> int:
    """The sidebar narrows with the terminal: the tiles keep their room."""
    return SIDEBAR_WIDE if terminal >= 120 else SIDEBAR_MID if terminal >= 100 else SIDEBAR_NARROW


def cells(widget: Widget) -> int:
    """A widget's width when the stylesheet gives it in cells (else 0)."""
    width = widget.styles.width
    return int(width.value) if width is not None and width.unit is Unit.CELLS else 0
