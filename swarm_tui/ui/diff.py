"""The diff view: one agent's change in its worktree against its base, full size, opened by
`d` on an agent that has a worktree.

The engine reads the change when the view opens, and again on `r`: the files with their
counts, the commits on the agent's branch, then the patches (committed, and apart from them
what the working tree holds). A line cursor moves over the rows; `c` writes a comment on the
cursor's line, shown under it; `enter` sends every comment to the agent as one message
through its queue (journaled like any message). Comments not sent stay with the view's app
for the next `d` on that agent. `M` merges the branch into its base, as `swarm merge NAME`.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Size
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Label

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.protocol.models import DiffView
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.diffparse import Anchor, neutralise, review_message
from swarm_tui.ui.diffrows import DARK, LIGHT, Document, Painter, Palette, Row, counts
from swarm_tui.ui.keys import hint
from swarm_tui.ui.prompt import FocusScreen

MAX_WIDTH = 8_000  # cells of a row drawn (a longer line is cut)
FILE_KEYS = [
    Binding("right_square_bracket", "file(1)", "Next file", tooltip="the next file's patch"),
    Binding("left_square_bracket", "file(-1)", "Prev file",
            tooltip="the previous file's patch"),
]

FILES_HINT = Binding("right_square_bracket,left_square_bracket", "file(1)", "Next/prev file")


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


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

    def show(self, doc: Document, comments: dict[Anchor, str], palette: Palette) -> None:
        """Draw this document (the cursor stays on its line when the line is still there)."""
        keep = self.current.anchor if self.rows else None
        self.doc, self.painter = doc, Painter(doc, palette)
        self.set_comments(comments, keep)

    def set_comments(self, comments: dict[Anchor, str], keep: Anchor | None = None) -> None:
        assert self.doc is not None
        keep = keep or (self.current.anchor if self.rows else None)
        self.rows = self.doc.with_comments(comments)
        self._strips.clear()
        self.virtual_size = Size(min(MAX_WIDTH, self.doc.width), len(self.rows))
        at = next((i for i, r in enumerate(self.rows) if r.kind == "code" and r.anchor == keep),
                  None) if keep is not None else None
        self.move_to(self.cursor if at is None else at)
        self.refresh()

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
        at = range(self.cursor + 1, len(self.rows)) if step > 0 \
            else range(self.cursor - 1, -1, -1)
        found = next((i for i in at if self.rows[i].kind == "file"), None)
        if found is None:
            self.notify("no file after this one" if step > 0 else "no file before this one",
                        timeout=3)
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


class DiffScreen(ModalScreen[None]):
    """One agent's change, full size: read it, comment on lines, send the comments as one
    review, merge; escape is back to the fleet."""

    BINDINGS = [
        Binding("c", "comment", "Comment", tooltip="write (or edit) a comment on the "
                "cursor's line: path:LINE, or path:LINE (old) for a removed line"),
        Binding("x", "uncomment", "Delete comment", tooltip="delete the cursor line's comment"),
        Binding("enter", "send", "Send review", tooltip="every comment to the agent as one "
                "message, through its queue (journaled like any message)"),
        Binding("M", "merge", "Merge", tooltip="merge the branch into its base (asks first), "
                "as `swarm merge NAME`"),
        Binding("r", "reload", "Read again", tooltip="read the change again, as it is now"),
        Binding("escape,q", "close", "Close", tooltip="back to the fleet; comments not sent "
                "are kept for the next d on this agent"),
    ]

    DEFAULT_CSS = """
    DiffScreen { background: $background; }
    #diff-box { width: 1fr; height: 1fr; border: thick $accent; background: $surface; }
    #diff-title { height: auto; padding: 0 1; }
    #diff-status { height: 1; padding: 0 1; color: $text-muted; }
    #diff-keys { padding: 0 1; }
    """

    def __init__(self, client: FleetClient, view: DiffView, comments: dict[Anchor, str]
                 ) -> None:
        """`comments`: the agent's comments not sent yet (this screen adds to them, and
        empties them once sent)."""
        super().__init__()
        self.client = client
        self.view = view
        self.agent = view.agent
        self.comments = comments
        self.said = ""  # what the last send or merge did
        self.busy = False  # a send or a merge on its way

    def compose(self) -> ComposeResult:
        with Vertical(id="diff-box"):
            yield Label(self._title(), id="diff-title")
            yield DiffLog(self._draw_status, id="diff-log")
            yield Label("", id="diff-status")
            yield Label(hint([FILES_HINT, *self.BINDINGS]), id="diff-keys", classes="box-help")

    @property
    def diff_log(self) -> DiffLog:
        return self.query_one(DiffLog)

    def on_mount(self) -> None:
        if not self.query(DiffLog):
            return  # closed before it was mounted
        self.diff_log.focus()
        self._show(self.view)

    def _show(self, view: DiffView) -> None:
        self.view = view
        self.query_one("#diff-title", Label).update(self._title())
        self.diff_log.show(Document(view), self.comments, DARK if self.app.current_theme.dark
                      else LIGHT)

    def _title(self) -> Text:
        v = self.view
        added, deleted = v.added, v.deleted  # committed and not, together
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(v.agent, style="bold")
        title.append(f"  {neutralise(v.branch)} → {neutralise(v.base)}  ")
        title.append(f"+{added} ", style="bold #3fb950")
        title.append(f"−{deleted}", style="bold #f85149")
        title.append(f", {plural(v.changed, 'file')}")
        where = f"{v.host}:" if v.host != "local" else ""
        title.append(f"   {where}{neutralise(v.worktree)}", style="dim")
        if v.conflicts:
            title.append(f"\n⚠ conflicts with {neutralise(v.base)}: "
                         + ", ".join(neutralise(c) for c in v.conflicts), style="bold red")
        if v.trimmed:
            title.append(f"\ntrimmed: {neutralise(v.trimmed)}", style="yellow")
        return title

    def _draw_status(self) -> None:
        if not self.query("#diff-status"):
            return  # (closed before it was drawn)
        log = self.diff_log
        row = log.current
        parts = [f"row {log.cursor + 1}/{len(log.rows)}"]
        if row.anchor is not None:
            parts.append(str(row.anchor))
        elif row.file >= 0 and log.doc is not None:
            parts.append(log.doc.files[row.file].patch.path)
        if self.comments:
            parts.append(f"{plural(len(self.comments), 'comment')}: enter sends "
                         f"{'it' if len(self.comments) == 1 else 'them'} to {self.agent}")
        if self.said:
            parts.append(self.said)
        self.query_one("#diff-status", Label).update(Text(" · ".join(parts), no_wrap=True,
                                                          overflow="ellipsis"))

    def _say(self, line: str, severity: SeverityLevel = "information") -> None:
        self.said = line
        self.app.notify(line, severity=severity, timeout=8)
        self._draw_status()

    # ------------------------------------------------------------------ comments
    def action_comment(self) -> None:
        anchor = self.diff_log.current.anchor
        if anchor is None:
            self.app.notify("c comments a line of code: move the cursor to a line of a hunk",
                            severity="warning", timeout=5)
            return
        self.app.push_screen(FocusScreen(
            "", self.comments.get(anchor, ""), title=f"Comment on {anchor}",
            placeholder="what to change here (empty: no comment)", verb="comment"),
            lambda text: self._commented(anchor, text))

    def _commented(self, anchor: Anchor, text: str | None) -> None:
        if text is None:
            return
        text = " ".join(neutralise(text).split())
        if text:
            self.comments[anchor] = text
        else:
            self.comments.pop(anchor, None)
        self.diff_log.set_comments(self.comments, anchor)

    def action_uncomment(self) -> None:
        anchor = self.diff_log.current.anchor
        if anchor is None or anchor not in self.comments:
            self.app.notify("no comment on this line", timeout=3)
            return
        del self.comments[anchor]
        self.diff_log.set_comments(self.comments, anchor)

    def action_send(self) -> None:
        if not self.comments:
            self.app.notify("no comments to send: c on a line writes one", severity="warning",
                            timeout=5)
            return
        if self.busy:
            return
        self.busy = True
        sent = dict(self.comments)
        self.run_worker(self._send(sent), group="diff-ask", exit_on_error=False)

    async def _send(self, sent: dict[Anchor, str]) -> None:
        try:
            await self.client.send([self.agent], review_message(sent))
        except (Refused, Unreachable) as exc:
            self._say(f"review not sent: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - said, never a crash of the view
            self._say(f"review not sent: {exc!r}", "error")
            return
        finally:
            self.busy = False
        for anchor, text in sent.items():  # (one edited meanwhile stays, to send again)
            if self.comments.get(anchor) == text:
                del self.comments[anchor]
        self.diff_log.set_comments(self.comments)
        self._say(f"review queued for {self.agent}: {plural(len(sent), 'comment')}")

    # ------------------------------------------------------------------ the change
    def action_merge(self) -> None:
        v = self.view
        unsent = f" ({plural(len(self.comments), 'comment')} not sent)" if self.comments else ""
        merged = [f for f in v.files if f.part == "committed"]  # commits only are merged
        size = counts(sum(f.added for f in merged), sum(f.deleted for f in merged))
        self.app.push_screen(ConfirmScreen(
            f"Merge {neutralise(v.branch)} → {neutralise(v.base)} ({size or 'no lines'}, "
            f"{plural(len({f.path for f in merged}), 'file')} committed){unsent}?"),
            self._merge)

    def _merge(self, yes: bool | None) -> None:
        if yes and not self.busy:
            self.busy = True
            self.run_worker(self._merge_now(), group="diff-ask", exit_on_error=False)

    async def _merge_now(self) -> None:
        try:
            done = await self.client.merge(self.agent)
        except (Refused, Unreachable) as exc:
            self._say(f"not merged: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - said, never a crash of the view
            self._say(f"not merged: {exc!r}", "error")
            return
        finally:
            self.busy = False
        self._say(done)
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._reload(), group="diff", exclusive=True, exit_on_error=False)

    async def _reload(self) -> None:
        try:
            view = await self.client.diff(self.agent)
        except (Refused, Unreachable) as exc:
            self._say(f"changes of {self.agent}: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - said; the view keeps what it showed
            self._say(f"changes of {self.agent}: the answer could not be read ({exc!r})",
                      "error")
            return
        self._show(view)

    def action_close(self) -> None:
        if self.comments:
            self.app.notify(f"{plural(len(self.comments), 'comment')} on {self.agent}'s "
                            "change kept, not sent: d shows them again, enter sends",
                            severity="warning", timeout=8)
        self.dismiss(None)
