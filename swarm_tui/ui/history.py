"""The history view: one agent's tmux scrollback, full size, opened from zoom by `pageup`
or the mouse wheel.

The engine reads the history on demand down the host's control channel (the view asks once
when it opens, and again on `r`). Colours are kept; every other escape sequence and control
character is dropped before anything is drawn, so an agent's output can never reach the
terminal as a command (a clipboard write, a title, a bell). `/` searches it (a plain,
smart-case search: a regular expression that backtracks without end must never freeze the
view), `n` / `N` move between matches, and text selected with the mouse, or the current
match's line, is copied with `y` (OSC 52: it reaches the clipboard over SSH too).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Label

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.ui.keys import hint
from swarm_tui.ui.prompt import FocusScreen

MAX_MATCHES = 10_000  # matches one search marks
MAX_WIDTH = 8_000  # cells a line may take (the engine cuts longer lines)
WHEEL_LINES = 3  # lines the wheel over a zoomed tile scrolls back

# escape sequences: CSI (and its C1 form), the string sequences (OSC, DCS, ...) to BEL or
# ST or the end of the line, any other escape; SGR (colours) is the one kind kept
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[P\]X^_]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b(?:[ -/]*[0-~])?"
)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MATCH = Style(color="black", bgcolor="#ffd75f")  # hex: never remapped by a theme
CURRENT = Style(color="black", bgcolor="#ff8700", bold=True, underline=True)


def sanitize(line: str) -> str:
    """A history line as it may be drawn: colour (SGR) sequences kept, every other escape
    sequence and control character gone, a tab a space."""
    out, at = [], 0
    for m in _ESCAPE.finditer(line):
        out.append(_CONTROLS.sub("", line[at : m.start()].replace("\t", " ")))
        if _SGR.fullmatch(m.group()):
            out.append(m.group())
        at = m.end()
    out.append(_CONTROLS.sub("", line[at:].replace("\t", " ")))
    return "".join(out)


def plain(line: str) -> str:
    """A sanitized line's text, as searched, selected and copied."""
    return _SGR.sub("", line)


def find(lines: list[str], query: str) -> list[tuple[int, int, int]]:
    """Every (line, start, end) where `query` is, in order: case-insensitive unless the
    query has a capital (as less and vim's smartcase); at most MAX_MATCHES."""
    if not query:
        return []
    fold = query == query.lower()
    needle = query.lower() if fold else query
    found: list[tuple[int, int, int]] = []
    for y, line in enumerate(lines):
        hay = line.lower() if fold else line
        at = hay.find(needle)
        while at >= 0:
            found.append((y, at, at + len(needle)))
            if len(found) >= MAX_MATCHES:
                return found
            at = hay.find(needle, at + max(1, len(needle)))
    return found


class HistoryLog(ScrollView, can_focus=True):
    """The lines of a history, drawn with the line API (thousands of lines cost only the
    rows on screen), with search matches marked and mouse selection."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Line up", tooltip="one line back"),
        Binding("down,j", "scroll_down", "Line down", tooltip="one line forward"),
        Binding("pageup", "page_up", "Page up", tooltip="a page back (the wheel scrolls too)"),
        Binding("pagedown", "page_down", "Page down", tooltip="a page forward"),
        Binding("home,g", "scroll_home", "Oldest", tooltip="the oldest line tmux kept"),
        Binding("end,G", "scroll_end", "Newest", tooltip="the agent's screen as it was read"),
    ]

    DEFAULT_CSS = "HistoryLog { height: 1fr; }"

    def __init__(
        self, on_scroll: Callable[[], None] | None = None, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.lines: list[str] = []  # sanitized: text and colours
        self.plain: list[str] = []
        self.matches: list[tuple[int, int, int]] = []
        self.current: int | None = None  # index into matches
        self._by_line: dict[int, list[tuple[int, int, int]]] = {}  # y -> (start, end, index)
        self._strips: LRUCache[int, Strip] = LRUCache(1024)
        self._on_scroll = on_scroll

    def set_lines(self, lines: list[str]) -> None:
        self.lines = [sanitize(line) for line in lines]
        self.plain = [plain(line) for line in self.lines]
        width = max((min(MAX_WIDTH, cell_len(p)) for p in self.plain), default=0)
        self.virtual_size = Size(width, len(self.lines))
        self.set_matches([])

    def set_matches(self, matches: list[tuple[int, int, int]]) -> None:
        self.matches, self.current = matches, None
        self._by_line = {}
        for i, (y, start, end) in enumerate(matches):
            self._by_line.setdefault(y, []).append((start, end, i))
        self._strips.clear()
        self.refresh()

    def set_current(self, index: int) -> None:
        """Make match `index` the current one and bring it into view, centred."""
        self.current = index
        y, start, end = self.matches[index]
        self._strips.clear()
        height, width = self.scrollable_content_region.height, self.scrollable_content_region.width
        x = 0 if end <= width else max(0, start - width // 3)
        self.scroll_to(x=x, y=max(0, y - height // 2), animate=False)
        self.refresh()

    @property
    def bottom_line(self) -> int:
        """The index of the last line in view."""
        return int(self.scroll_y) + max(1, self.scrollable_content_region.height) - 1

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._on_scroll is not None:
            self._on_scroll()

    # ------------------------------------------------------------------ drawing
    def _text(self, y: int) -> Text:
        line = self.lines[y]
        text = Text.from_ansi(line, end="") if "\x1b" in line else Text(line, end="")
        if text.plain != self.plain[y]:  # the decoder read it otherwise: its text, uncoloured
            text = Text(self.plain[y], end="")
        text.no_wrap = True
        for start, end, i in self._by_line.get(y, ()):
            text.stylize(CURRENT if i == self.current else MATCH, start, end)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            style = self.screen.get_component_rich_style("screen--selection")
            text.stylize(style, start, len(text) if end == -1 else end)
        return text

    def _strip(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is None:
            text = self._text(y)
            segments = [s for s in text.render(self.app.console) if s.text != "\n"]
            strip = Strip(segments).crop(0, MAX_WIDTH)
            self._strips[y] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width or self.size.width
        index = scroll_y + y
        style = self.rich_style
        if not 0 <= index < len(self.lines):
            return Strip([Segment(" " * width, style)], width)
        strip = self._strip(index).crop_extend(scroll_x, scroll_x + width, style)
        return strip.apply_style(style).apply_offsets(scroll_x, index)

    # ------------------------------------------------------------------ selection
    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.plain)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()


class HistoryScreen(ModalScreen[None]):
    """One agent's history, full size: scroll, search, select and copy; escape is back in
    zoom."""

    BINDINGS = [
        Binding("slash", "search", "Search", tooltip="find text (capitals: exact case)"),
        Binding("n", "next_match(1)", "Next match", tooltip="the next match down"),
        Binding("N", "next_match(-1)", "Previous match", tooltip="the previous match up"),
        Binding(
            "y,c",
            "copy",
            "Copy",
            tooltip="copy the text selected with the mouse, or "
            "the current match's line (OSC 52: works over SSH)",
        ),
        Binding("r", "reload", "Read again", tooltip="read the history again, as it is now"),
        Binding("escape,q", "close", "Back to zoom", tooltip="back to the agent's live screen"),
    ]

    DEFAULT_CSS = """
    HistoryScreen { background: $background; }
    #history-box { width: 1fr; height: 1fr; border: thick $accent; background: $surface; }
    #history-title { height: 1; text-style: bold; padding: 0 1; }
    #history-status { height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, client: FleetClient, agent: str, back: int | None = None) -> None:
        """`back`: lines to open scrolled back from the newest (None: one page)."""
        super().__init__()
        self.client = client
        self.agent = agent
        self.back = back
        self.query_text = ""
        self.loaded = False
        self.truncated = False

    def compose(self) -> ComposeResult:
        with Vertical(id="history-box"):
            yield Label(f"history of {self.agent}: reading…", id="history-title")
            yield HistoryLog(self._draw_status, id="history-log")
            yield Label("", id="history-status")
            yield Label(hint(self.BINDINGS), classes="box-help")

    @property
    def history_log(self) -> HistoryLog:
        return self.query_one(HistoryLog)

    def on_mount(self) -> None:
        self.history_log.focus()
        self.run_worker(self._load(), group="history", exclusive=True, exit_on_error=False)

    async def _load(self, keep_from_end: int | None = None) -> None:
        try:
            view = await self.client.history(self.agent)
        except (Refused, Unreachable) as exc:
            self._failed(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - said and the screen closed, never "reading…"
            self._failed(f"the answer could not be read ({exc!r})")
            return
        log = self.history_log
        log.set_lines(view.lines)
        self.loaded, self.truncated = True, view.truncated
        older = " (older lines left out)" if view.truncated else ""
        self.query_one("#history-title", Label).update(
            Text(f"history of {self.agent}: {len(view.lines):,} lines{older}", no_wrap=True)
        )
        back = keep_from_end
        if back is None:
            back = (
                self.back if self.back is not None else max(1, log.scrollable_content_region.height)
            )
        self.call_after_refresh(self._open_at, back)

    def _failed(self, why: str) -> None:
        """The history could not be read: one line, and the screen goes (unless it shows an
        earlier reading)."""
        self.app.notify(f"history of {self.agent}: {why}", severity="error", timeout=10)
        if not self.loaded:
            self.dismiss(None)

    def _open_at(self, back: int) -> None:
        log = self.history_log
        log.scroll_to(y=max(0, log.max_scroll_y - back), animate=False, immediate=True)
        if self.query_text:
            self._search(self.query_text, quiet=True)
        self._draw_status()

    def _draw_status(self) -> None:
        if not self.is_mounted:
            return
        log = self.history_log
        total = len(log.lines)
        parts = (
            [
                f"lines {min(total, int(log.scroll_y) + 1)}–{min(total, log.bottom_line + 1)}"
                f" of {total:,}"
            ]
            if self.loaded
            else []
        )
        if self.query_text:
            if log.current is not None:
                more = "+" if len(log.matches) >= MAX_MATCHES else ""
                parts.append(
                    f"match {log.current + 1}/{len(log.matches)}{more} for {self.query_text!r}"
                )
            else:
                parts.append(f"no match for {self.query_text!r}")
        self.query_one("#history-status", Label).update(Text(" · ".join(parts), no_wrap=True))

    # ------------------------------------------------------------------ actions
    def action_search(self) -> None:
        self.app.push_screen(
            FocusScreen(
                "",
                self.query_text,
                title=f"Search the history of {self.agent}",
                placeholder="text (capitals: exact case); empty: no search",
                verb="search",
            ),
            self._searched,
        )

    def _searched(self, text: str | None) -> None:
        if text is not None:
            self._search(text)

    def _search(self, text: str, quiet: bool = False) -> None:
        log = self.history_log
        self.query_text = text
        log.set_matches(find(log.plain, text))
        if log.matches:
            # the nearest match at or above the bottom of the view, else the first below
            bottom = log.bottom_line
            at = bisect_right([y for y, _, _ in log.matches], bottom) - 1
            log.set_current(max(0, at))
        elif text and not quiet:
            self.app.notify(
                f"no match for {text!r} in {self.agent}'s history", severity="warning", timeout=5
            )
        self._draw_status()

    def action_next_match(self, step: int) -> None:
        log = self.history_log
        if not log.matches:
            if not self.query_text:
                self.app.notify("search first: / then the text", timeout=5)
            return
        current = log.current if log.current is not None else -1 if step > 0 else 0
        log.set_current((current + step) % len(log.matches))
        self._draw_status()

    def action_copy(self) -> None:
        log = self.history_log
        text = self.get_selected_text()
        if not text and log.current is not None:
            text = log.plain[log.matches[log.current][0]]
        if not text:
            self.app.notify(
                "nothing to copy: select text with the mouse, or search (/)",
                severity="warning",
                timeout=5,
            )
            return
        self.app.copy_to_clipboard(text)
        count = text.count("\n") + 1
        self.app.notify(f"copied {count} line{'s' * (count != 1)}", timeout=4)

    def action_reload(self) -> None:
        log = self.history_log
        from_end = max(0, log.max_scroll_y - int(log.scroll_y))
        self.run_worker(
            self._load(keep_from_end=from_end), group="history", exclusive=True, exit_on_error=False
        )

    def action_close(self) -> None:
        self.dismiss(None)
