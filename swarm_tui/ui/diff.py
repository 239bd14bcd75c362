"""The diff view: one agent's change in its worktree against its base, full size, opened by
`d` on an agent that has a worktree.

The engine reads the change when the view opens, again on `r`, and again by itself when the
agent goes idle or the size of its change moves (the cursor keeps its line, else its file,
and its place on screen; comments not sent stay): the files with their counts, the commits
on the agent's branch, then the patches (committed, and apart from them what the working
tree holds). A line cursor moves over the rows; `c` writes a comment on the cursor's line
(in a box at the bottom, the line in sight above it), shown under it; `enter` sends every
comment to the agent as one message through its queue (journaled like any message), and the
status line follows that message until it is delivered. Comments not sent stay with the
view's app for the next `d` on that agent. `M` merges the branch into its base, as
`swarm merge NAME`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.protocol.models import AgentView, ChangeView, DiffView, MessageView
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.diffhead import packed, plural, title_text, wrapped
from swarm_tui.ui.difflog import DiffLog
from swarm_tui.ui.diffparse import Anchor, neutralise, review_message
from swarm_tui.ui.diffrows import DARK, LIGHT, Document, counts
from swarm_tui.ui.keys import bindings_of, hint
from swarm_tui.ui.prompt import FocusScreen

__all__ = ["CommentBox", "DiffLog", "DiffScreen", "MergeQuestion"]

FILES_HINT = Binding("right_square_bracket,left_square_bracket", "file(1)", "Next/prev file")
WATCH = 0.5  # seconds between looks at the agent (gone idle?) and at the review's message
KEY_LINES = 2  # rows the key hint may take (the rest ends in …)
SAID_LINES = 3  # rows what the last send, merge or reading said may take
BELOW_LOG = 1 + KEY_LINES + SAID_LINES + 1  # status, keys, said, the box's border
UNDELIVERED = ("failed", "cancelled")
Looked = tuple[str, float | None, ChangeView | None]  # an agent's state, since, change


def lift_notes(screen: ModalScreen[Any], box: str) -> None:
    """Notes float above a box docked at the bottom of `screen`, not over it."""
    found = screen.query(box)
    if found and found.first().region.height:
        for rack in screen.query("#textual-toastrack"):  # (Textual's own, on every screen)
            rack.styles.margin = (0, 0, found.first().region.height, 0)


class CommentBox(FocusScreen):
    """The comment line, docked at the bottom of the diff view so that the line it is about
    stays in sight above it; `placed` is told the row of the screen where the box starts."""

    DEFAULT_CSS = """
    CommentBox { background: $background 30%; }
    CommentBox #comment-box {
        dock: bottom; width: 100%; height: auto;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    CommentBox #comment-title { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, anchor: Anchor, current: str, placed: Callable[[int], None]) -> None:
        super().__init__(
            "",
            current,
            title=f"Comment on {anchor}",
            placeholder="what to change here (empty: no comment)",
            verb="comment",
        )
        self.placed = placed

    def compose(self) -> ComposeResult:
        keys = [
            replace(b, description=self.verb) if b.action == "save" else b
            for b in bindings_of(self.BINDINGS)
        ]
        with Vertical(id="comment-box"):
            yield Label(
                Text(self.title_text, no_wrap=True, overflow="ellipsis"), id="comment-title"
            )
            yield Input(value=self.current, id="focus-input", placeholder=self.placeholder)
            yield Label(hint(keys), id="prompt-help")

    def on_mount(self) -> None:  # (FocusScreen's own, called by Textual too, focuses)
        self.call_after_refresh(self._say_where)

    def on_resize(self) -> None:
        self.call_after_refresh(self._say_where)

    def _say_where(self) -> None:
        box = self.query("#comment-box")
        if box and box.first().region.height:
            self.placed(box.first().region.y)
            lift_notes(self, "#comment-box")


class MergeQuestion(ConfirmScreen):
    """The merge's question, docked at the bottom of the diff view: its head (branch, base,
    conflicts) stays in sight above it."""

    DEFAULT_CSS = """
    MergeQuestion #merge-box {
        dock: bottom; width: 100%; height: auto; max-height: 80%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    MergeQuestion #confirm-question { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="merge-box"):
            yield Label(self.question, id="confirm-question")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        self.call_after_refresh(lift_notes, self, "#merge-box")

    def on_resize(self) -> None:
        self.call_after_refresh(lift_notes, self, "#merge-box")


@dataclass
class Review:
    """A review sent: its message's id and the comments it carried."""

    ids: list[int]
    comments: dict[Anchor, str]
    delivered: bool = False


class DiffScreen(ModalScreen[None]):
    """One agent's change, full size: read it, comment on lines, send the comments as one
    review, merge; escape is back to the fleet."""

    BINDINGS = [
        Binding(
            "c",
            "comment",
            "Comment",
            tooltip="write (or edit) a comment on the "
            "cursor's line: path:LINE, or path:LINE (old) for a removed line",
        ),
        Binding("x", "uncomment", "Delete comment", tooltip="delete the cursor line's comment"),
        Binding(
            "enter",
            "send",
            "Send review",
            tooltip="every comment to the agent as one "
            "message, through its queue (journaled like any message)",
        ),
        Binding(
            "M",
            "merge",
            "Merge",
            tooltip="merge the branch into its base (asks first), as `swarm merge NAME`",
        ),
        Binding(
            "r",
            "reload",
            "Read again",
            tooltip="read the change again, as it is now "
            "(done by itself when the agent goes idle or its change's size moves)",
        ),
        Binding(
            "escape,q",
            "close",
            "Close",
            tooltip="back to the fleet; comments not sent are kept for the next d on this agent",
        ),
    ]

    DEFAULT_CSS = f"""
    DiffScreen {{ background: $background; }}
    #diff-box {{ width: 1fr; height: 1fr; border: thick $accent; background: $surface; }}
    #diff-title, #diff-status {{
        width: 1fr; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis;
    }}
    #diff-title {{ height: auto; }}
    #diff-status {{ height: 1; color: $text-muted; }}
    #diff-said {{ width: 1fr; height: auto; max-height: {SAID_LINES}; padding: 0 1; }}
    #diff-said.-error {{ color: $text-error; }}
    #diff-keys {{
        width: 1fr; height: auto; max-height: {KEY_LINES}; padding: 0 1; color: $text-muted;
    }}
    /* notes float above the status line, the said lines and the keys, not over them */
    DiffScreen ToastRack {{ margin-bottom: {BELOW_LOG}; }}
    """

    def __init__(self, client: FleetClient, view: DiffView, comments: dict[Anchor, str]) -> None:
        """`comments`: the agent's comments not sent yet (this screen adds to them, and
        empties them once sent)."""
        super().__init__()
        self.client = client
        self.view = view
        self.agent = view.agent
        self.comments = comments
        self.said = ""  # what the last send, merge or reading said (a refusal, whole)
        self.said_error = False
        self.review: Review | None = None  # the last review sent, followed to delivery
        self.note = ""  # why the change was last read again by itself
        self.busy = False  # a send or a merge on its way
        self._seen: Looked | None = None  # the agent, as last looked at
        self._stale = ""  # why the change should be read again (once this view is on top)
        self._said_drawn: tuple[str, bool, int] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="diff-box"):
            yield Label(self._title(), id="diff-title")
            yield DiffLog(self._draw_status, id="diff-log")
            yield Label("", id="diff-status")
            yield Label("", id="diff-said")
            yield Label(self._keys(), id="diff-keys")

    @property
    def diff_log(self) -> DiffLog:
        return self.query_one(DiffLog)

    def on_mount(self) -> None:
        if not self.query(DiffLog):
            return  # closed before it was mounted
        self.diff_log.focus()
        self._seen = self._looked()
        self.set_interval(WATCH, self._watch)
        self._show(self.view)

    def on_resize(self) -> None:
        if not self.query("#diff-title"):
            return  # (closed)
        self.query_one("#diff-title", Label).update(self._title())
        self.query_one("#diff-keys", Label).update(self._keys())
        self._draw_status()

    def _show(self, view: DiffView) -> None:
        self.view = view
        self.query_one("#diff-title", Label).update(self._title())
        self.diff_log.show(
            Document(view), self.comments, DARK if self.app.current_theme.dark else LIGHT
        )

    @property
    def _width(self) -> int:
        """The cells a line of the head or the foot has (the box's border and padding)."""
        return max(0, self.size.width - 4)

    def _title(self) -> Text:
        return title_text(self.view, self._width)

    def _keys(self) -> str:
        keys: list[BindingType] = [FILES_HINT, *self.BINDINGS]
        return packed([hint([b]) for b in keys], self._width, KEY_LINES)

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
            parts.append(
                f"{plural(len(self.comments), 'comment')}: enter sends "
                f"{'it' if len(self.comments) == 1 else 'them'} to {self.agent}"
            )
        if self.review is not None:
            r = self.review
            parts.append(
                f"review {'delivered to' if r.delivered else 'queued for'} "
                f"{self.agent}: {plural(len(r.comments), 'comment')}"
            )
        if self.note:
            parts.append(self.note)
        self.query_one("#diff-status", Label).update(
            Text(" · ".join(parts), no_wrap=True, overflow="ellipsis")
        )
        drawn = (self.said, self.said_error, self._width)
        if drawn != self._said_drawn:  # (not on every move of the cursor: a new layout)
            self._said_drawn = drawn
            said = self.query_one("#diff-said", Label)
            said.display = bool(self.said)
            said.set_class(self.said_error, "-error")
            said.update(wrapped(self.said, self._width, SAID_LINES))

    def _say(self, line: str, severity: SeverityLevel = "information") -> None:
        self.said, self.said_error = line, severity == "error"
        self.app.notify(line, severity=severity, timeout=8)
        self._draw_status()

    # ------------------------------------------------------------------ kept current
    def _looked(self) -> Looked | None:
        """The agent's state, since when, and its change's size, as the fleet view has them
        now."""
        fleet = self.client.view
        agent: AgentView | None = fleet.agents.get(self.agent) if fleet is not None else None
        return (agent.state, agent.state_since, agent.changes) if agent is not None else None

    def _watch(self) -> None:
        """The agent gone idle (a turn shorter than a look apart counts: its idle began
        anew), or its change's size moved: the change is read again (once this view is on
        top: never under the comment line or a question). And the review's message,
        followed."""
        seen, now = self._seen, self._looked()
        self._seen = now
        if seen is not None and now is not None and seen != now:
            if now[0] == "idle" and (seen[0] != "idle" or seen[1] != now[1]):
                self._stale = f"{self.agent} went idle"
            elif now[2] != seen[2]:
                self._stale = f"{self.agent}'s change moved"
        self._follow_review()
        if self._stale and self.app.screen is self:  # (is_current: also when under a box)
            why, self._stale = self._stale, ""
            self.run_worker(self._reload(why), group="diff", exclusive=True, exit_on_error=False)

    def _message(self, mid: int) -> MessageView | None:
        fleet = self.client.view
        return next((m for m in fleet.messages if m.id == mid), None) if fleet is not None else None

    def _follow_review(self) -> None:
        """Queued, then delivered (said until the change is next read); not delivered: its
        comments come back, to send again."""
        r = self.review
        if r is None or r.delivered:
            return
        found = [m for m in map(self._message, r.ids) if m is not None]
        lost = [m for m in found if m.status in UNDELIVERED]
        if lost:
            self.review = None
            for anchor, text in r.comments.items():
                self.comments.setdefault(anchor, text)  # (a newer comment on it stays)
            self.diff_log.set_comments(self.comments)
            detail = f": {neutralise(lost[0].detail)}" if lost[0].detail else ""
            self._say(
                f"review not delivered to {self.agent} ({lost[0].status}{detail}); "
                "its comments are back: enter sends them again",
                "error",
            )
        elif found and all(m.status == "delivered" for m in found):
            r.delivered = True
            self._draw_status()
        elif any(m.status == "uncertain" for m in found):
            self.review = None
            self._say(f"review to {self.agent}: not known if it arrived (uncertain)", "warning")

    # ------------------------------------------------------------------ comments
    def action_comment(self) -> None:
        anchor = self.diff_log.current.anchor
        if anchor is None:
            self.app.notify(
                "c comments a line of code: move the cursor to a line of a hunk",
                severity="warning",
                timeout=5,
            )
            return
        self.app.push_screen(
            CommentBox(anchor, self.comments.get(anchor, ""), self.diff_log.keep_above),
            partial(self._commented, anchor),
        )

    def _commented(self, anchor: Anchor, text: str | None) -> None:
        self.diff_log.release()
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
            self.app.notify(
                "no comments to send: c on a line writes one", severity="warning", timeout=5
            )
            return
        if self.busy:
            return
        self.busy = True
        sent = dict(self.comments)
        self.run_worker(self._send(sent), group="diff-ask", exit_on_error=False)

    async def _send(self, sent: dict[Anchor, str]) -> None:
        try:
            messages = await self.client.send([self.agent], review_message(sent))
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
        self.review = Review([m.id for m in messages], sent)
        self.said = ""  # (a refusal of an earlier try is over)
        self.diff_log.set_comments(self.comments)
        self.app.notify(
            f"review queued for {self.agent}: {plural(len(sent), 'comment')}", timeout=5
        )
        self._follow_review()

    # ------------------------------------------------------------------ the change
    def action_merge(self) -> None:
        """Ask the engine what a merge would do first (a task not complete, conflicts, a
        dirty base, files no merge takes): the question says it, or the refusal comes now,
        not after a yes."""
        if not self.busy:
            self.busy = True
            self.run_worker(self._ask_merge(), group="diff-ask", exit_on_error=False)

    async def _ask_merge(self) -> None:
        v = self.view
        unsent = f" ({plural(len(self.comments), 'comment')} not sent)" if self.comments else ""
        merged = [f for f in v.files if f.part == "committed"]  # commits only are merged
        size = counts(sum(f.added for f in merged), sum(f.deleted for f in merged))
        what = (
            f"{v.branch} → {v.base} ({size or 'no lines'}, "
            f"{plural(len({f.path for f in merged}), 'file')} committed){unsent}?"
        )
        force = False
        try:
            try:
                would = await self.client.merge(self.agent, check=True)
                question = [f"Merge {what}", f"{would[:1].upper()}{would[1:]}."]
            except Refused as exc:
                await self.client.merge(self.agent, check=True, force=True)  # may refuse too
                force = True
                question = [f"{exc}.", f"Merge anyway: {what}"]
        except (Refused, Unreachable) as exc:
            self.busy = False
            self._say(f"not merged: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - said, never a crash of the view
            self.busy = False
            self._say(f"not merged: {exc!r}", "error")
            return
        self.busy = False
        self.app.push_screen(
            MergeQuestion("\n".join(map(neutralise, question))), partial(self._merge, force)
        )

    def _merge(self, force: bool, yes: bool | None) -> None:
        if yes and not self.busy:
            self.busy = True
            self.run_worker(self._merge_now(force), group="diff-ask", exit_on_error=False)

    async def _merge_now(self, force: bool) -> None:
        try:
            done = await self.client.merge(self.agent, force=force)
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

    async def _reload(self, why: str = "") -> None:
        """Read the change again (`why`: what made this view read it by itself)."""
        try:
            view = await self.client.diff(self.agent)
        except (Refused, Unreachable) as exc:
            self._say(f"changes of {self.agent}: {exc}", "error")
            return
        except Exception as exc:  # noqa: BLE001 - said; the view keeps what it showed
            self._say(f"changes of {self.agent}: the answer could not be read ({exc!r})", "error")
            return
        r = self.review
        if r is not None and (r.delivered or not any(map(self._message, r.ids))):
            # delivered (said until now: the change read since shows what it did), or its
            # message is one this view hears nothing of: nothing more to follow
            self.review = None
        if why and view != self.view:
            self.note = f"read again: {why}"
        elif not why:
            self.note = ""
        self._show(view)

    def action_close(self) -> None:
        if self.comments:
            self.app.notify(
                f"{plural(len(self.comments), 'comment')} on {self.agent}'s "
                "change kept, not sent: d shows them again, enter sends",
                severity="warning",
                timeout=8,
            )
        self.dismiss(None)
