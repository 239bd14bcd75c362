"""The diff view at 80x24, 120x40 and 200x55: the head's lines and the key hint fit (what
is cut ends in …, the change's size and every key stay), a long refusal is said whole, the
comment line leaves the line it is about in sight, the merge question leaves the head in
sight, and notes float above the status line instead of over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from swarm_tui.protocol.models import DiffView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.diff import CommentBox, DiffScreen
from tests.ui.conftest import text_of, until
from tests.ui.diffrepo import real_change
from tests.ui.test_diff_view import client_for, cursor_to, open_diff

SIZES = [(80, 24), (120, 40), (200, 55)]
LONG = {
    "branch": "swarm/a-fleet-with-a-long-name/Gauss-the-prince-of-mathematicians",
    "worktree": "/home/someone/work/trees/a-fleet-with-a-long-name/Gauss-the-prince",
    "conflicts": [f"src/module_{i}/implementation.py" for i in range(6)],
}
REFUSAL = (
    "Gauss is exited: nothing is delivered to it; start it again with `swarm fresh "
    "Gauss` or take it out of the layout file /home/someone/layouts/a-long-name.toml"
)


@pytest.fixture
def change(tmp_path: Path) -> DiffView:
    return real_change(tmp_path / "git").model_copy(update=LONG)


def lines_of(screen: DiffScreen, selector: str) -> list[str]:
    return [ln.rstrip() for ln in text_of(screen.query_one(selector)).splitlines()]


@pytest.mark.parametrize("size", SIZES)
async def test_the_head_and_the_keys_fit_and_say_where_they_are_cut(
    tmp_path: Path, change: DiffView, size: tuple[int, int]
) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=size) as pilot:
        screen = await open_diff(app, pilot)
        inner = size[0] - 4  # the box's border and padding
        title = lines_of(screen, "#diff-title")
        assert len(title) == 2  # the change, its conflicts
        assert all(cell_len(ln.strip()) <= inner for ln in title), title
        assert "+10 −4, 6 files" in title[0]  # the size stays, whatever is cut
        # whole (the worktree may go first), or cut with an ellipsis
        assert title[0].endswith((change.worktree, "6 files", "…")), title[0]
        assert title[1].endswith((change.conflicts[-1], "…")), title[1]
        assert title[1].strip().startswith("⚠ conflicts with main in 6 files: src/module_0/")
        keys = lines_of(screen, "#diff-keys")
        assert all(cell_len(ln.strip()) <= inner for ln in keys), keys
        hint = " · ".join(ln.strip() for ln in keys)
        for key in (
            "] / [ next/prev file",
            "c comment",
            "x delete comment",
            "enter send review",
            "M merge",
            "r read again",
            "esc / q close",
        ):
            assert key in hint, (key, keys)
        if size[0] == 80:  # two lines there, an item never split across them
            assert len(keys) == 2
        status = lines_of(screen, "#diff-status")
        assert len(status) == 1 and status[0].strip().startswith("row 1/")


@pytest.mark.parametrize("size", SIZES)
async def test_a_long_refusal_is_said_whole_between_the_status_and_the_keys(
    tmp_path: Path, change: DiffView, size: tuple[int, int]
) -> None:
    client = client_for(tmp_path, change)
    client.send_refusal = REFUSAL
    app = SwarmApp(client)
    async with app.run_test(size=size) as pilot:
        screen = await open_diff(app, pilot)
        await cursor_to(pilot, screen.diff_log, "+import json")
        await pilot.press("c", *"unused", "enter")
        await until(lambda: screen.comments and app.screen is screen, what="a comment")
        await pilot.press("enter")
        said = screen.query_one("#diff-said")
        await until(lambda: said.display and text_of(said).strip(), what="the refusal said")
        assert " ".join(text_of(said).split()) == f"review not sent: {REFUSAL}"
        assert said.has_class("-error")
        status, keys = screen.query_one("#diff-status"), screen.query_one("#diff-keys")
        log = screen.diff_log
        assert log.region.bottom <= status.region.y < said.region.y < keys.region.y
        assert said.region.bottom <= keys.region.y


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize(
    "line", ["+import json", '+    name = argv[1] if len(argv) > 1 else "swarm"']
)
async def test_the_comment_line_leaves_its_line_in_sight(
    tmp_path: Path, change: DiffView, size: tuple[int, int], line: str
) -> None:
    """A line near the top of the change, and the last hunk's line (the view cannot
    scroll it up without blank rows after the last)."""
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=size) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        await cursor_to(pilot, log, line)
        at = log.cursor
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, CommentBox), what="the comment line")
        box = app.screen.query_one("#comment-box")

        def line_y() -> int:
            return log.content_region.y + log.cursor - int(log.scroll_y)

        await until(
            lambda: box.region.height and log.content_region.y <= line_y() < box.region.y,
            what="the line above the box",
            detail=lambda: f"line at {line_y()}, box at {box.region}",
        )
        assert log.cursor == at
        assert box.region.bottom == size[1]  # docked at the bottom, the whole width
        assert box.region.width == size[0]
        drawn = "".join(s.text for s in log.render_line(log.cursor - int(log.scroll_y)))
        assert line in drawn
        await pilot.press(*"a comment", "enter")
        await until(lambda: app.screen is screen, what="the comment written")
        assert log.virtual_size.height == len(log.rows)  # the blank rows gone with the box


async def test_the_merge_question_leaves_the_head_in_sight(
    tmp_path: Path, change: DiffView
) -> None:
    """And a note shown then floats above the question."""
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("c")  # on no line of code: a note says so
        await until(lambda: screen.query("Toast"), what="the note")
        await pilot.press("M")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        question = app.screen.query_one("#confirm-question")
        await until(lambda: question.region.height, what="the question laid out")
        head = screen.query_one("#diff-title")
        assert head.region.bottom <= question.region.y - 1  # (its box's border above it)
        words = " ".join(text_of(question).split())
        assert words.startswith(f"Merge {LONG['branch']} → main (+6 −3, 5 files committed)")
        box = app.screen.query_one("#merge-box")
        await until(
            lambda: (
                app.screen.query("Toast")
                and app.screen.query("Toast").first().region.bottom <= box.region.y
            ),
            what="the note above the question",
            detail=lambda: f"{[t.region for t in app.screen.query('Toast')]} over {box.region}",
        )


async def test_notes_float_above_the_status_line(tmp_path: Path, change: DiffView) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("c")  # on no line of code: a note says so
        await until(lambda: screen.query("Toast"), what="the note")
        toast = screen.query("Toast").first()
        await until(lambda: toast.region.height, what="the note laid out")
        status = screen.query_one("#diff-status")
        assert toast.region.bottom <= status.region.y
