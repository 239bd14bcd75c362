"""The diff view stays current while it is open: the agent going idle, or the size of its
change moving in the fleet view, reads the change again by itself (never under the comment
line; the cursor keeps its line and its place on screen; comments not sent stay), and the
review sent is followed until its message is delivered (or comes back when it is not)."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import ChangeView, DiffView, MessageView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.diff import CommentBox, DiffScreen
from swarm_tui.ui.diffparse import Anchor
from swarm_tui.ui.diffrows import Document, Row
from tests.ui.conftest import text_of, until
from tests.ui.diffrepo import git, make_repo, read_change
from tests.ui.test_diff_view import CHANGE, all_rows, client_for, comment, cursor_to, open_diff


def two_readings(tmp: Path) -> tuple[DiffView, DiffView]:
    """The change, then the same change after the agent's next turn: a new file listed
    first, and lines added at the top of src/app.py (every row below them moves)."""
    _, wt = make_repo(tmp / "git")
    first = read_change(wt, tmp)
    (wt / "aaa.py").write_text("A = 1\n")
    app = wt / "src" / "app.py"
    app.write_text('"""The app, read again."""\n# one\n# two\n' + app.read_text())
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "More")
    return first, read_change(wt, tmp)


def status(screen: DiffScreen) -> str:
    return text_of(screen.query_one("#diff-status"))


def set_agent(view: FleetView, **update: object) -> None:
    """The engine's word on Gauss, as the client's fleet view would get it."""
    view.agents["Gauss"] = view.agents["Gauss"].model_copy(update=update)


async def test_going_idle_reads_again_keeping_the_line_its_place_and_the_comments(
    tmp_path: Path,
) -> None:
    first, later = two_readings(tmp_path)
    client = client_for(tmp_path, first, later)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        await comment(pilot, screen, "+import json", "unused import")
        await cursor_to(pilot, log, "+    return value * 3")
        anchor, on_screen = log.current.anchor, log.cursor - int(log.scroll_y)
        assert anchor is not None and on_screen > 0
        assert client.view is not None and client.view.agents["Gauss"].state == "working"
        assert len(client.asked("diff")) == 1
        set_agent(client.view, state="idle", state_since=2e9)
        await until(
            lambda: any("aaa.py" in r for r in all_rows(log)),
            what="the change read again by itself",
        )
        assert len(client.asked("diff")) == 2
        # the same line under the cursor, at the same place on screen, though rows moved
        assert log.current.anchor == anchor
        assert log.cursor - int(log.scroll_y) == on_screen
        assert "✎ unused import" in "\n".join(all_rows(log))  # not sent: still there
        assert screen.comments
        await until(
            lambda: "read again: Gauss went idle" in status(screen),
            what="why it was read again, said",
        )


async def test_a_new_change_size_reads_again_but_not_under_the_comment_line(tmp_path: Path) -> None:
    first, later = two_readings(tmp_path)
    client = client_for(tmp_path, first, later)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        await cursor_to(pilot, log, "+import json")
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, CommentBox), what="the comment line")
        await pilot.press(*"half typed")
        assert client.view is not None
        set_agent(client.view, changes=CHANGE.model_copy(update={"added": 13}))
        await until(lambda: screen._stale, what="the new size seen")
        assert len(client.asked("diff")) == 1  # nothing moves under the comment line
        await pilot.press("enter")
        await until(lambda: app.screen is screen, what="the comment written")
        await until(lambda: len(client.asked("diff")) == 2, what="read once it is closed")
        await until(lambda: any("aaa.py" in r for r in all_rows(log)), what="drawn")
        assert log.current.anchor is not None and log.current.anchor.path == "src/app.py"
        assert list(screen.comments.values()) == ["half typed"]
        assert "read again: Gauss's change moved" in status(screen)


async def test_a_reading_with_nothing_new_is_not_announced(tmp_path: Path) -> None:
    first, _ = two_readings(tmp_path)
    client = client_for(tmp_path, first)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        assert client.view is not None
        set_agent(client.view, changes=ChangeView(added=10, deleted=4, files=6, conflicts=False))
        await until(lambda: len(client.asked("diff")) == 2, what="read again")
        await until(
            lambda: not [w for w in screen.workers if w.group == "diff" and w.is_running],
            what="the reading done",
        )
        assert "read again" not in status(screen)


def delivered(message_id: int, status: str, detail: str = "") -> MessageView:
    return MessageView(
        id=message_id,
        created=0,
        sender="human",
        recipient="Gauss",
        text="Review of your change:",
        status=status,
        updated=1,
        detail=detail,
    )


async def test_the_review_is_followed_until_delivered_then_gone_after_a_reading(
    tmp_path: Path,
) -> None:
    first, later = two_readings(tmp_path)
    client = client_for(tmp_path, first, later)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await comment(pilot, screen, "+import json", "unused import")
        await pilot.press("enter")
        await until(
            lambda: "review queued for Gauss: 1 comment" in status(screen), what="queued, said"
        )
        assert client.view is not None
        client.view.note_message(delivered(1, "sending"))
        client.view.note_message(delivered(1, "delivered"))
        await until(
            lambda: "review delivered to Gauss: 1 comment" in status(screen), what="delivered, said"
        )
        # the agent's turn on it ends: the change is read again, and the review is over
        set_agent(client.view, state="idle", state_since=2e9)
        await until(lambda: len(client.asked("diff")) == 2, what="read again")
        await until(
            lambda: "review" not in status(screen),
            what="the review's word gone",
            detail=lambda: status(screen),
        )


async def test_a_review_not_delivered_gives_its_comments_back(tmp_path: Path) -> None:
    first, _ = two_readings(tmp_path)
    client = client_for(tmp_path, first)
    app = SwarmApp(client)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_diff(app, pilot)
        await comment(pilot, screen, "+import json", "unused import")
        await pilot.press("enter")
        await until(lambda: not screen.comments, what="sent")
        assert client.view is not None
        client.view.note_message(delivered(1, "failed", "Gauss exited before it was typed"))
        await until(lambda: screen.comments, what="the comments back")
        assert list(screen.comments.values()) == ["unused import"]

        def said() -> str:
            return " ".join(text_of(screen.query_one("#diff-said")).split())

        await until(
            lambda: (
                said()
                == (
                    "review not delivered to Gauss (failed: Gauss exited before it was typed); its "
                    "comments are back: enter sends them again"
                )
            ),
            what="the refusal said",
            detail=said,
        )
        assert "review queued" not in status(screen)
        assert "1 comment: enter sends it to Gauss" in status(screen)


def test_a_place_is_found_again_in_a_new_reading() -> None:
    """The cursor's line; when it went, the nearest line of its file; a hunk's header, the
    file's hunk of that rank (or its last); a file gone, the same row."""

    def doc(patch: str) -> tuple[Document, list[Row]]:
        d = Document(
            DiffView(agent="Gauss", worktree="/w", branch="b", base="main", committed=patch)
        )
        return d, d.with_comments({})

    def at(d: Document, rows: list[Row], text: str, kind: str = "code") -> int:
        return next(i for i, r in enumerate(rows) if r.kind == kind and r.text == text)

    head = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
    first, rows1 = doc(head + "@@ -1,2 +1,3 @@\n x\n+y\n z\n@@ -20,1 +21,1 @@\n-old\n+new\n")
    later, rows2 = doc(
        "diff --git a/0.py b/0.py\n--- /dev/null\n+++ b/0.py\n"
        "@@ -0,0 +1,2 @@\n+A\n+B\n" + head + "@@ -5,2 +5,2 @@\n a\n-b\n+c\n"
    )
    moved = later.locate(rows2, first.place(rows1, at(first, rows1, "y")))
    assert rows2[moved].anchor == Anchor("a.py", 5)  # line 2 went: line 5 is the nearest
    hunk = first.place(rows1, at(first, rows1, "@@ -20,1 +21,1 @@", "hunk"))
    assert rows2[later.locate(rows2, hunk)].text == "@@ -5,2 +5,2 @@"
    same = first.place(rows1, at(first, rows1, "x"))
    assert rows1[first.locate(rows1, same)].text == "x"
    gone, rows3 = doc("diff --git a/q.py b/q.py\n--- a/q.py\n+++ b/q.py\n@@ -1 +1 @@\n-1\n+2\n")
    assert gone.locate(rows3, first.place(rows1, 3)) == 3
