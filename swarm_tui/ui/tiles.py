"""Agent tiles: the bottom of each agent's screen, drawn line by line from tmux's capture.

Captured text goes in as Rich `Text.from_ansi`, never as markup (agent output is full of
`[`). Rendered lines are cached by their raw text: most lines do not change between captures.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.containers import Container
from textual.dom import NoScreen
from textual.geometry import Region, Size
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.asking import asking, banner
from swarm_tui.ui.compositor import FleetScreen
from swarm_tui.ui.durations import since
from swarm_tui.ui.fit import Part, fit

MIN_TILE_W, MIN_TILE_H = 36, 9  # the smallest tile worth showing (cells, borders included)

STATE_CLASSES = {
    "starting": "-starting",
    "working": "-working",
    "idle": "-idle",
    "needs-permission": "-permission",
    "exited": "-exited",
    "unreachable": "-unreachable",
}
# one colour per state, everywhere (tile border, sidebar, status line): theme variables
STATE_COLORS = {
    "starting": "foreground-darken-3",
    "working": "success",
    "idle": "primary-lighten-1",
    "needs-permission": "warning",
    "exited": "error",
    "unreachable": "panel-lighten-3",
}
STATE_MARKS = {
    "starting": "◌",
    "working": "●",
    "idle": "○",
    "needs-permission": "?",
    "exited": "✕",
    "unreachable": "⚠",
}
SHORT_STATES = {"needs-permission": "needs you"}  # the state's word where room is short
TITLE_EDGES = 6  # around a border title: each corner, an edge cell and a space (Textual's)


def tile_title(
    agent: AgentView, marked: bool, link_down: float | None, width: int, now: float
) -> str:
    """A tile's title in `width` cells (0: any): mark, glyph and name first; then the state
    and how long it has waited on a dialog, the state's word shortened, then dropped, so
    the clock stays; then the queue."""
    queued = (f"{agent.queued} queued", f"✉{agent.queued}", "") if agent.queued else ("",)
    where = f" @{agent.host}" if agent.host != "local" else ""
    if link_down is not None:
        head = f"⚠ {agent.name}{where}"
        state: tuple[str, ...] = (
            f"link down for {since(link_down, now)}",
            f"down {since(link_down, now)}",
        )
    else:
        glyph = STATE_MARKS.get(agent.state, STATE_MARKS["unreachable"])
        head = f"{'✓ ' if marked else ''}{glyph} {agent.name}{where}"
        clock = (
            since(agent.state_since, now) if asking(agent) and agent.state_since is not None else ""
        )
        words = dict.fromkeys((agent.state, SHORT_STATES.get(agent.state, agent.state)))
        state = (*(" ".join(filter(None, (w, clock))) for w in words), clock)
    parts = [Part((head,), 0), Part(state, 1), Part(queued, 2)]
    return fit(parts, width).plain


# escape sequences of a captured line: CSI, OSC/DCS strings, and two-byte escapes
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[P\]X^_]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b(?:[ -/]*[0-~])?"
)

CONSOLE = Console(width=10_000, color_system="truecolor", force_terminal=True)


@lru_cache(maxsize=8192)
def _segments(line: str) -> tuple[Segment, ...]:
    if line.isprintable():  # a plain line (a log, a compiler's output): nothing to decode
        return (Segment(line),)
    text = Text.from_ansi(line, end="")
    text.no_wrap = True
    return tuple(seg for seg in text.render(CONSOLE) if seg.text != "\n")


def state_styles(variables: dict[str, str]) -> dict[str, str]:
    """Each state's Rich style in the app's theme (bold for the ones that need a look)."""
    bold = ("working", "needs-permission")
    return {
        state: ("bold " if state in bold else "") + variables.get(var, "")
        for state, var in STATE_COLORS.items()
    }


@lru_cache(maxsize=8192)
def line_strip(line: str, width: int) -> Strip:
    """One captured line as a strip exactly `width` cells wide (strips are immutable: a line
    that scrolls up a row is drawn from the same strip)."""
    return Strip(_segments(line)).crop_extend(0, width, None)


@lru_cache(maxsize=8192)
def _fitted(line: str, width: int) -> tuple[Segment, ...]:
    return tuple(Segment.adjust_line_length(list(_segments(line)), width, None))


def fitted(line: str, width: int) -> list[Segment]:
    """One captured line's segments, cut or padded to exactly `width` cells."""
    return list(_fitted(line, width))


def plain(line: str) -> str:
    """A captured line without escape sequences."""
    return _ANSI.sub("", line)


def _blank(line: str) -> bool:
    return not plain(line).strip()


def squeeze(screen: list[str]) -> list[str]:
    """The lines that matter: runs of blank lines squeezed to one, trailing blank lines
    dropped (full-screen CLIs leave a gap between transcript and input box)."""
    out: list[str] = []
    for line in screen:
        if _blank(line) and (not out or _blank(out[-1])):
            continue
        out.append(line)
    while out and _blank(out[-1]):
        out.pop()
    return out


class Backdrop(Container):
    """A container that draws only its background behind its children. Textual renders
    every widget under a changed region at every frame, each whole (the screen, the row,
    the grid behind a tile that printed a line); this one hands back what it drew last
    while nothing it depends on changed."""

    def __init__(self, *children: Widget, id: str | None = None) -> None:  # noqa: A002
        super().__init__(*children, id=id)
        self._drawn: tuple[object, list[Strip]] | None = None

    def notify_style_update(self) -> None:
        self._drawn = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        key = (
            crop,
            self.outer_size,
            self.app.theme,
            self.background_colors,
            tuple(id(f) for f in self.get_line_filters()),
        )
        if self._drawn is None or self._drawn[0] != key:
            self._drawn = (key, super().render_lines(crop))
        return self._drawn[1]


class BackdropRow(Backdrop):
    """A `Backdrop` laid out as a row (a `Horizontal`)."""

    DEFAULT_CSS = """
    BackdropRow { width: 1fr; height: 1fr; layout: horizontal; overflow: hidden hidden; }
    """


class TileGrid(Backdrop):
    """The grid of tiles; says when its size changed (the terminal, or the judge pane), so
    the app can choose columns and rows again. The app's own Resize is stopped by Textual
    before a subclass sees every one."""

    class Resized(Message):
        pass

    def on_resize(self) -> None:
        self.post_message(self.Resized())


class AgentTile(Widget):
    """One agent's live screen, with its name and state on the border. The tile shows an
    agent by name; what it draws comes from the fleet view (its last screen, its state)."""

    DEFAULT_CSS = ""

    def __init__(self, view: FleetView) -> None:
        super().__init__()
        self.view = view
        self.name_shown: str | None = None
        self._lines: list[str] = []
        self._banner: list[str] = []  # a dialog's question and options, under the screen
        self._rows: dict[object, Strip] = {}  # finished rows of the last render, by content
        self._look: tuple[object, tuple[int, int, int]] | None = None
        # (look, left edge, right edge, background, inner width) of a content row
        self._edges: tuple[int, list[Segment], list[Segment], Color, int] | None = None
        self._last: tuple[object, list[str], list[Strip]] | None = None
        self._title_of: tuple[bool, float | None] = (False, None)  # (marked, link down since)
        self._home: Screen[object] | None = None  # the screen it is on, once looked up

    @property
    def agent(self) -> AgentView | None:
        """The shown agent as the view last heard of it (None: no agent, or gone)."""
        return self.view.agents.get(self.name_shown) if self.name_shown else None

    def show(self, name: str | None) -> None:
        self.name_shown = name
        self.display = name is not None
        self.update_screen()
        self.update_state()

    def update_screen(self) -> None:
        name = self.name_shown
        self._lines = squeeze(self.view.screens.get(name, [])) if name else []
        if self._banner:
            self._lines += self._banner
        screen = self._home
        if screen is None:  # looked up once: a tile stays on the screen it was made on
            try:
                screen = self._home = self.screen
            except NoScreen:  # not mounted yet
                self.refresh()
                return
        if isinstance(screen, FleetScreen):
            screen.redraw(self)  # (a tile since removed is not drawn: Textual's way, then)
        else:
            self.refresh()

    def update_state(self, marked: bool = False, link_down: float | None = None) -> None:
        agent = self.agent
        if agent is None:
            return
        self._draw_banner()
        state = agent.state if agent.state in STATE_CLASSES else "unreachable"
        for cls in STATE_CLASSES.values():
            self.set_class(cls == STATE_CLASSES[state], cls)
        self.set_class(link_down is not None, "-link-down")
        self._title_of = (marked, link_down)
        self._draw_title()
        self.border_subtitle = agent.focus or ""

    def _draw_title(self) -> None:
        """The title for the tile's width (again when its width changes)."""
        agent = self.agent
        if agent is not None:
            width = self.outer_size.width
            self.border_title = tile_title(
                agent,
                *self._title_of,
                width - TITLE_EDGES if width > TITLE_EDGES else 0,
                time.time(),
            )

    class Resized(Message):
        """A tile's room changed (it may settle a frame after the page was laid out): the
        app says the shown tiles' sizes to the engine again."""

    def on_resize(self) -> None:
        self._draw_title()
        self._draw_banner()  # fitted to the new width
        self.post_message(self.Resized())

    def _draw_banner(self) -> None:
        """An asking agent's question and keys under its screen, for the tile's width."""
        agent = self.agent
        colour = self.app.get_css_variables().get("warning", "")
        width = self.content_region.width or self.size.width or 400
        shown = banner(agent, colour, width) if agent is not None and asking(agent) else []
        if shown != self._banner:
            self._banner = shown
            self.update_screen()

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width or self.size.width
        height = self.content_region.height or self.size.height
        # bottom-aligned: the input box and the state line are at the bottom
        i = len(self._lines) - height + y
        if 0 <= i < len(self._lines):
            return line_strip(self._lines[i], width)
        return Strip([Segment(" " * width, Style())])

    def notify_style_update(self) -> None:
        self._look = None  # a class, the theme or the stylesheet changed: styles again
        super().notify_style_update()

    def _look_of(self, width: int, height: int) -> tuple[int, int, int]:
        """Everything that draws a row besides its text, as one hash, and where the agent's
        screen is (its first row and how many: inside the border and padding); re-read
        only when a cheap check (size, classes, theme, filters) or a style update says they
        may differ."""
        filters = self.get_line_filters()
        cheap = (width, height, self.classes, self.app.theme, tuple(id(f) for f in filters))
        if self._look is None or self._look[0] != cheap:
            styles = self.styles
            look = hash(
                (
                    cheap[0],
                    cheap[2:],
                    styles.border,
                    styles.tint,
                    self.background_colors,
                    self.opacity,
                )
            )
            inside = self.content_region
            self._look = (cheap, (look, inside.y - self.region.y, inside.height))
        return self._look[1]

    def render_lines(self, crop: Region) -> list[Strip]:
        """The tile's rows, each rendered once (border, padding, styles) and then reused
        while it scrolls up the tile: an agent printing a line costs one new row, not a
        whole tile. A row is keyed by what it shows and by every style that draws it; a
        tile with nothing new (another tile changed) returns what it drew last."""
        width, height = self.outer_size
        look, top, inner = self._look_of(width, height)
        state = (crop, look, height, str(self.border_title), str(self.border_subtitle))
        last = self._last
        if last is not None and last[0] == state and last[1] is self._lines:
            return last[2]
        rows: dict[object, Strip] = {}
        out = []
        for y in crop.line_range:
            line = None
            if top <= y < top + inner:  # bottom-aligned, as render_line draws it
                i = len(self._lines) - inner + y - top
                line = self._lines[i] if 0 <= i < len(self._lines) else None
                key: object = (look, line)
            else:
                key = (look, height, y, state[3], state[4])
            strip = rows.get(key) or self._rows.get(key)
            if strip is None and top <= y < top + inner:
                strip = self._content_row(look, y, width, line)
            if strip is None:
                strip = super().render_lines(Region(0, y, width, 1))[0]
            rows[key] = strip
            out.append(strip)
        self._rows = rows
        if crop.x or crop.width != width:
            out = [strip.crop(crop.x, crop.right) for strip in out]
        self._last = (state, self._lines, out)
        return out

    def _content_row(self, look: int, y: int, width: int, line: str | None) -> Strip:
        """A row of the agent's screen between the tile's side borders. Textual's full path
        (styles, border, filters: about half a millisecond a row) runs once per look; its
        borders are then reused around each new line, which gets the same line filters
        (they work segment by segment), as one new Strip (each costs its caches). A tile
        with effects that touch every cell (a tint, opacity, padding) always takes the full
        path."""
        edges = self._edges
        if edges is None or edges[0] != look:
            strip = super().render_lines(Region(0, y, width, 1))[0]
            styles = self.styles
            left = self.content_region.x - self.region.x
            right = self.region.right - self.content_region.right
            plain_look = (
                not styles.tint.a
                and self.opacity == 1.0
                and styles.text_opacity == 1.0
                and styles.padding.left == styles.padding.right == 0
            )
            if plain_look and left <= 1 and right <= 1:
                self._edges = (
                    look,
                    list(strip.crop(0, left)),
                    list(strip.crop(width - right, width)),
                    self.background_colors[1],
                    width - left - right,
                )
            else:
                self._edges = None
            return strip  # drawn the full way: already right
        _, left_edge, right_edge, background, inner = edges
        body = fitted(line, inner) if line is not None else [Segment(" " * inner, Style())]
        for line_filter in self.get_line_filters():
            body = line_filter.apply(body, background)
        return Strip([*left_edge, *body, *right_edge], width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return container.height
