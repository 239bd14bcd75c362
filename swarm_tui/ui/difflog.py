"""The diff view's rows on screen: a scroll view drawn with the line API and a line cursor
that keeps its place (its line, else its file) when the change is read again."""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from swarm_tui.ui.diffparse import Anchor
from swarm_tui.ui.diffrows import Document, Painter, Palette, Place, Row

MAX_WIDTH = 8_000  # cells of a row drawn (a longer line is cut)
FILE_KEYS = [
    Binding("right_square_bracket", "file(1)", "Next file", tooltip="the next file's patch"),
    Binding("left_square_bracket", "file(-1)", "Prev file", tooltip="the previous file's patch"),
]


class DiffLog(ScrollView, can_focus=True):
    """The rows of a change, drawn with the line API (only the rows on screen cost
    anything), with a line cursor: the keys move it, a click puts it on a row."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Line up", tooltip="the cursor a line up"),
        Binding("down,j", "cursor(1)", "Line down", tooltip="the cursor a line down"),
        Binding("pageup", "page(-1)", "Page up", tooltip="a page up (the wheel scrolls too)"),
        Binding("pagedown", "page(1)", "Page down", tooltip="a page down"),
        Binding("home", "cursor_to(0)", "First line", tooltip="the first row"),
        Binding("end", "cursor_to(-1)", "Last line", tooltip="the last row"),
        *FILE_KEYS,
    ]

    DEFAULT_CSS = "DiffLog { height: 1fr; padding: 0 0 0 1; }"

    def __init__(self, on_move: Callable[[], None], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.doc: Document | None = None
        self.painter: Painter | None = None
        self.rows: list[Row] = []
        self.cursor = 0
        self._strips: LRUCache[tuple[int, bool], Strip] = LRUCache(1024)
        self._on_move = on_move
        self._room = 0  # blank rows after the last (the last line can scroll above a box)

    def show(self, doc: Document, comments: dict[Anchor, str], palette: Palette) -> None:
        """Draw this document: the cursor stays on its line (else the nearest line of its
        file, else its file) and where it was on screen."""
        place = self.place()
        self.doc, self.painter = doc, Painter(doc, palette)
        self._lay_out(comments, place)

    def set_comments(self, comments: dict[Anchor, str], keep: Anchor | None = None) -> None:
        """Draw these comments (the cursor on `keep`'s line, else where it is)."""
        place = self.place()
        if keep is not None:
            place = Place(self.cursor, "code", keep)
        self._lay_out(comments, place)

    def place(self) -> Place | None:
        """The cursor's place (None before anything is drawn)."""
        if self.doc is None or not self.rows:
            return None
        return self.doc.place(self.rows, self.cursor)

    def _lay_out(self, comments: dict[Anchor, str], place: Place | None) -> None:
        assert self.doc is not None
        # the cursor's row on screen, kept there
        on_screen = max(0, min(self.page_height - 1, self.cursor - int(self.scroll_y)))
        self.rows = self.doc.with_comments(comments)
        self._strips.clear()
        self._measure()
        self.cursor = 0 if place is None else self.doc.locate(self.rows, place)
        if place is not None:
            self.scroll_to(y=max(0, self.cursor - on_screen), animate=False, immediate=True)
        self.move_to(self.cursor)
        self.refresh()

    def _measure(self) -> None:
        width = min(MAX_WIDTH, self.doc.width) if self.doc is not None else 0
        self.virtual_size = Size(width, len(self.rows) + self._room)

    def keep_above(self, screen_y: int) -> None:
        """Scroll so that the cursor's row is above `screen_y` (a row of the screen, where
        a box over the view starts), with blank rows after the last if it needs them."""
        top = self.content_region.y  # the view's first row on screen
        below = max(0, top + self.page_height - screen_y)  # the view's rows under the box
        if below != self._room:
            self._room = below
            self._measure()
        line_y = top + self.cursor - int(self.scroll_y)
        if line_y >= screen_y:
            self.scroll_to(y=self.cursor - (screen_y - top) + 1, animate=False, immediate=True)

    def release(self) -> None:
        """No box over the view any more: no blank rows after the last."""
        if self._room:
            self._room = 0
            self._measure()
            self.move_to(self.cursor)

    @property
    def current(self) -> Row:
        return self.rows[self.cursor] if self.rows else Row("blank")

    @property
    def page_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def move_to(self, index: int) -> None:
        """Put the cursor on row `index` and bring it into view."""
        old, self.cursor = self.cursor, max(0, min(len(self.rows) - 1, index))
        top, height = int(self.scroll_y), self.page_height
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
        self.refresh_lines(old)
        self.refresh_lines(self.cursor)
        self._on_move()

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, pages: int) -> None:
        self.move_to(self.cursor + pages * self.page_height)

    def action_cursor_to(self, index: int) -> None:
        self.move_to(index if index >= 0 else len(self.rows) - 1)

    def action_file(self, step: int) -> None:
        """The cursor to the next (previous) file's header, shown at the top."""
        at = range(self.cursor + 1, len(self.rows)) if step > 0 else range(self.cursor - 1, -1, -1)
        found = next((i for i in at if self.rows[i].kind == "file"), None)
        if found is None:
            self.notify(
                "no file after this one" if step > 0 else "no file before this one", timeout=3
            )
            return
        self.scroll_to(y=found, animate=False, immediate=True)
        self.move_to(found)

    def on_click(self, event: events.Click) -> None:
        y = event.y - self.content_region.y + self.region.y + int(self.scroll_y)
        if 0 <= y < len(self.rows):
            self.move_to(y)

    # ------------------------------------------------------------------ drawing
    def _strip(self, index: int) -> Strip:
        cursor = index == self.cursor
        strip = self._strips.get((index, cursor))
        if strip is None:
            assert self.painter is not None
            text, fill = self.painter.paint(self.rows[index], cursor)
            segments = [s for s in text.render(self.app.console) if s.text != "\n"]
            width = max(self.virtual_size.width, self.scrollable_content_region.width)
            strip = Strip(segments).crop(0, MAX_WIDTH).extend_cell_length(width, fill)
            self._strips[(index, cursor)] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width or self.size.width
        index = scroll_y + y
        style = self.rich_style
        if not 0 <= index < len(self.rows):
            return Strip([Segment(" " * width, style)], width)
        strip = self._strip(index).crop_extend(scroll_x, scroll_x + width, style)
        return strip.apply_style(style).apply_offsets(scroll_x, index)

    def on_resize(self) -> None:
        self._strips.clear()
