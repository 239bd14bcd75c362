"""The diff view on the real app, over a client with no engine behind it whose `diff` answers
what git wrote just now for a real change in a real repository (tests/ui/diffrepo.py): the
files and their hunks drawn, code coloured by its language, the cursor, comments written,
shown, deleted, kept when the view closes and sent with enter as one message; merge asked
first (test_diff_merge.py); refusals said; hostile lines drawn as text; a 20,000-line diff
highlighted only where it is seen. And the footer's `d` (the sidebar's change size:
test_sidebar_change.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.style import Style
from textual.widgets import Input
from textual.widgets._footer import FooterKey  # the footer's key widget: not exported

from swarm_tui.protocol.models import ChangeView, DiffFileView, DiffView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.diff import DiffLog, DiffScreen
from swarm_tui.ui.diffrows import CHUNK, DARK
from swarm_tui.ui.footer import FleetFooter
from swarm_tui.ui.prompt import FocusScreen
from tests.ui.conftest import still_fleet, text_of, until
from tests.ui.diffrepo import DiffClient, real_change, with_worktrees

CHANGE = ChangeView(
    added=10, deleted=4, files=6, branch="swarm/ui/Gauss", base="main", conflicts=False
)
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@pytest.fixture
def change(tmp_path: Path) -> DiffView:
    return real_change(tmp_path)


def client_for(tmp_path: Path, *diffs: DiffView, refusal: str = "") -> DiffClient:
    view = with_worktrees(still_fleet(tmp_path, count=3), Gauss=CHANGE)
    return DiffClient(view, *diffs, refusal=refusal)


def said_by(app: SwarmApp) -> list[str]:
    """Every notification the app shows from now on (the list fills as they come)."""
    said: list[str] = []
    real = app.notify
    app.notify = lambda text, **kw: (said.append(str(text)), real(text, **kw))  # type: ignore[method-assign]
    return said


async def open_diff(app: SwarmApp, pilot) -> DiffScreen:  # type: ignore[no-untyped-def]
    await pilot.press("d")
    await until(lambda: isinstance(app.screen, DiffScreen), what="the diff view")
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    await until(
        lambda: screen.diff_log.rows and screen.diff_log.page_height > 1, what="the diff laid out"
    )
    return screen


def row_text(log: DiffLog, index: int) -> str:
    return "".join(s.text for s in log._strip(index)).rstrip()


def all_rows(log: DiffLog) -> list[str]:
    return [row_text(log, i) for i in range(len(log.rows))]


def visible(log: DiffLog) -> list[str]:
    return ["".join(s.text for s in log.render_line(y)).rstrip() for y in range(log.page_height)]


def index_of(log: DiffLog, text: str, start: int = 0) -> int:
    rows = all_rows(log)
    return next(i for i in range(start, len(rows)) if text in rows[i])


async def cursor_to(pilot, log: DiffLog, text: str) -> None:  # type: ignore[no-untyped-def]
    """Move the cursor with the keys (down, or up) to the first row that shows `text`."""
    want = index_of(log, text)
    key = "down" if want > log.cursor else "up"
    for _ in range(abs(want - log.cursor)):
        await pilot.press(key)
    await until(lambda: log.cursor == want, what=f"the cursor on {text!r}")


async def comment(pilot, screen: DiffScreen, line: str, text: str) -> None:  # type: ignore[no-untyped-def]
    await cursor_to(pilot, screen.diff_log, line)
    await pilot.press("c")
    await until(lambda: isinstance(screen.app.screen, FocusScreen), what="the comment line")
    await pilot.press(*text, "enter")
    await until(lambda: screen.app.screen is screen, what="the comment written")


async def test_d_shows_the_files_then_each_part_with_its_hunks(
    tmp_path: Path, change: DiffView
) -> None:
    client = client_for(
        tmp_path,
        change.model_copy(
            update={
                "conflicts": ["src/app.py"],
                "trimmed": "2 files (over 4 MB): big.bin, data.csv",
            }
        ),
    )
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        assert client.asked("diff") == [{"name": "Gauss"}]
        title = text_of(screen.query_one("#diff-title")).splitlines()
        assert title[0].startswith(" Gauss  swarm/ui/Gauss → main  +10 −4, 6 files")
        assert title[1].strip() == "⚠ conflicts with main: src/app.py"
        assert title[2].strip() == "trimmed: 2 files (over 4 MB): big.bin, data.csv"
        rows = all_rows(screen.diff_log)
        assert rows[:12] == [
            "Committed · 2 commits on swarm/ui/Gauss",
            "  e465373 A tail without a newline",
            "  81b03ce Parse with commas, a logo",
            "  gone.txt         −1     deleted",
            "  logo.png                binary, new",
            "  src/app.py       +2 −1",
            "  src/new_name.py  +1 −1  renamed from src/old_name.py",
            "  src/tail.txt     +3     new",
            "Uncommitted (working tree)",
            "  notes.md         +3     new, untracked",
            "  src/app.py       +1 −1",
            "",
        ]
        assert rows[12] == "━━ Committed ━━"
        files = [r for r in rows if r.startswith("▌")]
        assert files == [
            "▌gone.txt  −1  (deleted)",
            "▌logo.png    (binary, new)",
            "▌src/app.py  +2 −1",
            "▌src/new_name.py  +1 −1  (renamed from src/old_name.py)",
            "▌src/tail.txt  +3  (new)",
            "▌notes.md  +3  (new)",
            "▌src/app.py  +1 −1",
        ]
        # the uncommitted part after every committed file
        assert rows.index("━━ Uncommitted (working tree) ━━") == rows.index(files[5]) - 1
        app_py = rows.index("▌src/app.py  +2 −1")
        assert rows[app_py + 1 : app_py + 6] == [
            "@@ -2,6 +2,7 @@",
            "  2   2",
            "  3   3  import os",
            "  4   4  import sys",
            "      5 +import json",
        ]
        assert "@@ -12,7 +13,7 @@ def main(argv: list[str]) -> int:" in rows
        assert [r for r in rows if "return value" in r] == [
            " 15     -    return value * 2",
            "     16 +    return value * 3",
        ]
        assert (
            rows[rows.index("▌logo.png    (binary, new)") + 1].strip() == "binary file: not shown"
        )
        tail = rows.index("▌src/tail.txt  +3  (new)")
        assert rows[tail + 5].strip() == "No newline at end of file"
        assert visible(screen.diff_log)[0] == rows[0]
        assert "row 1/" in text_of(screen.query_one("#diff-status"))
        await pilot.press("escape")
        await until(lambda: len(app.screen_stack) == 1, what="back to the fleet")


def bg(hex_colour: str) -> object:
    return Style.parse(f"on {hex_colour}").bgcolor


def fg(hex_colour: str) -> object:
    return Style.parse(hex_colour).color


def colours(log: DiffLog, index: int) -> dict[str, Style]:
    """The styles of a row's words as drawn."""
    return {
        s.text.strip(): s.style for s in log._strip(index) if s.text.strip() and s.style is not None
    }


async def test_code_is_coloured_by_its_language_on_its_sides_tint(
    tmp_path: Path, change: DiffView
) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        added = colours(log, index_of(log, "+import json"))
        # Python: the keyword and the name in different colours, on the added line's tint
        assert added["import"].color != added["json"].color
        assert added["import"].bgcolor == added["json"].bgcolor == bg(DARK.added)
        assert added["+"].color == fg(DARK.plus)
        removed = colours(log, index_of(log, "-    return value * 2"))
        assert removed["return"].color != removed["value"].color
        assert removed["return"].bgcolor == bg(DARK.removed)
        context = colours(log, index_of(log, "def helper"))
        assert context["def"].color == removed["return"].color  # keywords alike
        assert context["def"].color != context["helper"].color
        assert context["def"].bgcolor != added["import"].bgcolor  # no tint on context
        # plain text: one colour for the whole line
        segments = list(log._strip(index_of(log, "+first")))
        after = [s for s in segments[[s.text for s in segments].index("+") + 1 :] if s.text.strip()]
        assert "".join(s.text for s in after) == "first"
        assert len({s.style.color for s in after if s.style}) == 1
        hunk = colours(log, index_of(log, "@@ -2,6 +2,7 @@"))
        assert hunk["@@ -2,6 +2,7 @@"].bold


async def test_the_cursor_moves_by_line_page_file_and_click(
    tmp_path: Path, change: DiffView
) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        page = log.page_height
        assert log.cursor == 0
        await pilot.press("down", "down", "j")
        await until(lambda: log.cursor == 3, what="three rows down")
        await pilot.press("up", "k")
        await until(lambda: log.cursor == 1, what="two rows up")
        await pilot.press("pagedown")
        await until(lambda: log.cursor == 1 + page, what="a page down")
        assert log.scroll_y > 0 and log.scroll_y <= log.cursor < log.scroll_y + page
        await pilot.press("pageup")
        await until(lambda: log.cursor == 1, what="a page up")
        await pilot.press("end")
        await until(lambda: log.cursor == len(log.rows) - 1, what="the last row")
        assert log.scroll_y == log.max_scroll_y
        await pilot.press("home")
        await until(lambda: log.cursor == 0 and log.scroll_y == 0, what="the first row")
        files = [i for i, r in enumerate(log.rows) if r.kind == "file"]
        await pilot.press("]")
        await until(lambda: log.cursor == files[0], what="] to the first file")
        await pilot.press("]", "]")
        await until(lambda: log.cursor == files[2], what="] ] to the third file")
        assert row_text(log, log.cursor) == "▌src/app.py  +2 −1"
        assert "src/app.py" in text_of(screen.query_one("#diff-status"))
        await pilot.press("[")
        await until(lambda: log.cursor == files[1], what="[ back a file")
        # the cursor's row is drawn in the cursor's colour, and only it
        cursor_bg = bg(DARK.cursor)
        assert all(s.style.bgcolor == cursor_bg for s in log._strip(log.cursor) if s.style)
        assert not any(s.style and s.style.bgcolor == cursor_bg for s in log._strip(0))
        # a click puts the cursor on the row under the mouse
        top = int(log.scroll_y)
        await pilot.click(log, offset=(10, 4))
        await until(lambda: log.cursor == top + 4, what="the clicked row")


async def test_comments_are_shown_under_their_lines_and_enter_sends_them_as_one_message(
    tmp_path: Path, change: DiffView
) -> None:
    client = client_for(tmp_path, change)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        await comment(pilot, screen, "+    return value * 3", "use a named constant")
        await comment(pilot, screen, "-    return value * 2", "why was 2 wrong?")
        await comment(pilot, screen, "+say ^[[31mred", "no escapes in text files")
        await comment(pilot, screen, "+import json", "unused import")
        at = index_of(log, "+    return value * 3")
        assert row_text(log, at + 1).strip() == "✎ use a named constant"
        assert (
            row_text(log, index_of(log, "-    return value * 2") + 1).strip()
            == "✎ why was 2 wrong?"
        )
        # c again edits the line's comment; x deletes one
        await comment(pilot, screen, "+import json", "json is not used")
        assert row_text(log, index_of(log, "+import json") + 1).strip() == "✎ json is not used"
        await cursor_to(pilot, log, "+say ^[[31mred")
        await pilot.press("x")
        await until(
            lambda: "no escapes in text files" not in "\n".join(all_rows(log)),
            what="the comment deleted",
        )
        assert "3 comments: enter sends them to Gauss" in text_of(screen.query_one("#diff-status"))
        await pilot.press("enter")
        await until(lambda: client.asked("send"), what="the review sent")
        assert client.asked("send") == [
            {
                "names": ["Gauss"],
                "skill": "",
                "params": {},
                "text": "Review of your change:\n"
                "src/app.py:5: json is not used\n"
                "src/app.py:15 (old): why was 2 wrong?\n"
                "src/app.py:16: use a named constant",
            }
        ]
        await until(lambda: not screen.comments, what="the comments cleared")
        assert not any("✎" in r for r in all_rows(log))
        assert "review queued for Gauss: 3 comments" in text_of(screen.query_one("#diff-status"))
        await pilot.press("enter")  # nothing left: nothing sent
        await pilot.pause()
        assert len(client.asked("send")) == 1


async def test_c_on_a_row_that_is_not_code_says_so(tmp_path: Path, change: DiffView) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("c")  # the first row: the file list's title
        await until(lambda: said, what="a word about it")
        assert said == ["c comments a line of code: move the cursor to a line of a hunk"]
        assert app.screen is screen


async def test_a_refused_review_keeps_its_comments_and_closing_keeps_them_too(
    tmp_path: Path, change: DiffView
) -> None:
    client = client_for(tmp_path, change)
    client.send_refusal = "Gauss is exited: nothing is delivered to it"
    app = SwarmApp(client)
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await comment(pilot, screen, "+import json", "unused import")
        await pilot.press("enter")
        await until(lambda: client.asked("send-refused"), what="the send tried")
        await until(lambda: said, what="the refusal said")
        assert said[-1] == "review not sent: Gauss is exited: nothing is delivered to it"
        assert screen.comments and "✎ unused import" in "\n".join(all_rows(screen.diff_log))
        await pilot.press("escape")
        await until(lambda: len(app.screen_stack) == 1, what="back to the fleet")
        assert said[-1] == (
            "1 comment on Gauss's change kept, not sent: d shows them again, enter sends"
        )
        # d again: the comment is there, and now it goes
        client.send_refusal = ""
        screen = await open_diff(app, pilot)
        assert "✎ unused import" in "\n".join(all_rows(screen.diff_log))
        await pilot.press("enter")
        await until(lambda: client.asked("send"), what="the review sent")
        assert (
            client.asked("send")[0]["text"] == "Review of your change:\nsrc/app.py:5: unused import"
        )
        await until(lambda: not app.reviews["Gauss"], what="nothing left to send")


async def test_a_merge_refusal_stays_said_in_the_view(tmp_path: Path, change: DiffView) -> None:
    """(What M asks and does: test_diff_merge.py.) The refusal stays in the view's own line
    once its note has gone, whole however long."""
    client = client_for(tmp_path, change)
    client.merge_refusal = "Gauss's branch conflicts with main in src/app.py: merge refused"
    app = SwarmApp(client)
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("M")
        await until(lambda: said and said[-1].startswith("not merged"), what="the refusal")
        assert said[-1] == f"not merged: {client.merge_refusal}"
        assert text_of(screen.query_one("#diff-said")).strip() == said[-1]
        assert app.screen is screen and client.asked("merge") == []


async def test_no_worktree_or_a_refusal_is_one_line_and_no_view(tmp_path: Path) -> None:
    client = client_for(tmp_path, refusal="Gauss's worktree is gone: /work/trees/ui/Gauss")
    app = SwarmApp(client)
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("right", "d")  # Hilbert: no worktree, nothing asked
        await until(lambda: said, what="a word about it")
        assert said == ["Hilbert has no worktree (worktree = true in the layout)"]
        assert client.asked("diff") == []
        await pilot.press("left", "d")
        await until(lambda: len(said) == 2, what="the refusal said")
        assert said[1] == "changes of Gauss: Gauss's worktree is gone: /work/trees/ui/Gauss"
        assert len(app.screen_stack) == 1


async def test_r_reads_again_and_a_comment_whose_line_went_is_still_shown(
    tmp_path: Path, change: DiffView
) -> None:
    later = DiffView(
        agent="Gauss",
        worktree="/w",
        branch="swarm/ui/Gauss",
        base="main",
        files=[DiffFileView(path="src/app.py", added=1, part="uncommitted")],
        uncommitted="diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n"
        "+++ b/src/app.py\n@@ -1 +1,2 @@\n x\n+now\n",
    )
    client = client_for(tmp_path, change, later)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await comment(pilot, screen, "+import json", "unused import")
        await pilot.press("r")
        await until(lambda: len(client.asked("diff")) == 2, what="read again")
        log = screen.diff_log
        await until(lambda: any("+now" in r for r in all_rows(log)), what="the new change")
        rows = all_rows(log)
        assert rows[0] == "✎ src/app.py:5: unused import  (its line is not in the diff now)"
        assert "Committed · 2 commits on swarm/ui/Gauss" not in rows
        await pilot.press("enter")  # it is sent with the rest all the same
        await until(lambda: client.asked("send"), what="sent")
        assert client.asked("send")[0]["text"].endswith("src/app.py:5: unused import")


async def test_hostile_lines_are_drawn_as_text(tmp_path: Path, change: DiffView) -> None:
    app = SwarmApp(client_for(tmp_path, change))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        rows = all_rows(log)
        assert "      2 +say ^[[31mred^[[0m ^[]0;title^G here" in rows
        for i in range(len(rows)):
            for seg in log._strip(i):
                assert not CONTROLS.search(seg.text), (i, repr(seg.text))
        await pilot.press("end")
        await pilot.pause()
        for y in range(log.page_height):
            for seg in log.render_line(y):
                assert not CONTROLS.search(seg.text), repr(seg.text)


async def test_a_big_diff_is_highlighted_only_where_it_is_seen(tmp_path: Path) -> None:
    lines = 20_000
    body = "".join(f"+value_{i} = {i}  # line {i}\n" for i in range(1, lines + 1))
    big = DiffView(
        agent="Gauss",
        worktree="/w",
        branch="swarm/ui/Gauss",
        base="main",
        files=[DiffFileView(path="big.py", added=lines)],
        committed=f"diff --git a/big.py b/big.py\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,{lines} @@\n{body}",
    )
    app = SwarmApp(client_for(tmp_path, big))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        log = screen.diff_log
        painter = log.painter
        assert painter is not None
        assert len(log.rows) > lines
        await until(lambda: any("value_1 = 1" in r for r in visible(log)), what="drawn")
        assert painter.highlighted == 1  # the first chunk: what is on screen
        await pilot.press("end")
        await until(
            lambda: f"value_{lines} = {lines}" in "\n".join(visible(log)),
            what="the last line drawn",
        )
        assert painter.highlighted == 2  # and the last one
        assert lines // CHUNK > 50  # (of a hundred)


async def test_the_footer_shows_d_while_an_agent_has_a_worktree(tmp_path: Path) -> None:
    view = still_fleet(tmp_path, count=3)
    app = SwarmApp(DiffClient(view))
    async with app.run_test(size=(220, 40)) as pilot:
        footer = app.query_one(FleetFooter)

        def shown() -> str:
            return " ".join(f"{k.key_display} {k.description}" for k in footer.query(FooterKey))

        await until(lambda: "m Messages" in shown(), what="the footer")
        assert "Changes" not in shown()
        with_worktrees(view, Hilbert=ChangeView(added=1, files=1))
        app.bridge.agents.add("Hilbert")
        app.bridge.wake()
        await until(lambda: "d Changes" in shown(), what="d in the footer", detail=shown)
        await pilot.press("question_mark")
        await until(lambda: app.screen.query("#help-table"), what="the help")
        await pilot.pause()
        helptext = text_of(app.screen.query_one("#help-table"))
        assert "an agent's change in its worktree (d)" in helptext
        for words in (
            "d Changes",
            "c Comment",
            "x Delete comment",
            "enter Send review",
            "M Merge",
            "] Next file",
            "[ Prev file",
        ):
            assert words in helptext, words


async def test_typing_a_comment_gets_the_letters_the_view_binds(
    tmp_path: Path, change: DiffView
) -> None:
    """c, x, M, r, q and [ ] typed into the comment line are text, not the view's keys."""
    client = client_for(tmp_path, change)
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await cursor_to(pilot, screen.diff_log, "+import json")
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, FocusScreen), what="the comment line")
        await pilot.press(*"cxMrq[]")
        field = app.screen.query_one(Input)
        await until(lambda: field.value == "cxMrq[]", what="the letters typed")
        await pilot.press("escape")
        await until(lambda: app.screen is screen, what="the comment line closed")
        assert screen.comments == {} and client.asked("merge") == []
