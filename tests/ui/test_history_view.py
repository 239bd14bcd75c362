"""The history view on the real app: opened from zoom by pageup or the wheel on a real
engine whose agent printed hundreds of numbered lines into tmux's history; scrolled,
searched (matches marked, n / N move, "match 3/40"), copied (OSC 52 through
copy_to_clipboard), escape back to zoom. And hostile lines (escape sequences, control
characters, a line longer than any screen) drawn as text only."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.style import Style
from textual import events
from textual.widgets import Input

from swarm_tui.protocol.client import Refused
from swarm_tui.protocol.models import HistoryView
from swarm_tui.testing import async_wait_until
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.history import CURRENT, MATCH, MAX_WIDTH, HistoryLog, HistoryScreen, find
from swarm_tui.ui.prompt import FocusScreen
from tests.ui.conftest import FAST, FakeClient, Live, start_live, still_fleet, stop_live, until

PRINTER = r"""
import sys
for i in range(1, int(sys.argv[1]) + 1):
    print(f"numbered line {i:05d} of Printer")
print("END of Printer", flush=True)
sys.stdin.read()
"""
LINES = 400


@pytest.fixture
async def printing(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Live]:
    """Printer printed LINES numbered lines (most now only in tmux's history); Mock is a
    mock agent beside it."""
    script = tmp_path / "printer.py"
    script.write_text(PRINTER)
    layout = tmp_path / "hist.toml"
    layout.write_text(
        'name = "histui"\n'
        f'[[agents]]\nname = "Printer"\ncli = "generic"\n'
        f'command = "{sys.executable} {script} {LINES}"\n'
        f'[[agents]]\nname = "Mock"\ncli = "mock"\nargs = {FAST}\n'
    )
    live = await start_live(layout, swarm_home)
    try:

        async def printed() -> bool:
            view = await live.client.history("Printer")
            return any("END of Printer" in ln for ln in view.lines)

        # the printer runs on its own clock
        await async_wait_until(printed, 20, "the printer to finish printing")
        yield live
    finally:
        await stop_live(live)


async def open_history(app: SwarmApp, pilot, key: str = "pageup") -> HistoryScreen:  # type: ignore[no-untyped-def]
    """Zoom the selected agent (Printer) and open its history with `key`."""
    await until(lambda: app.current_name() == "Printer", what="Printer selected")
    if not app.zoomed:
        await pilot.press("enter")
    assert app.zoomed
    await pilot.press(key)
    await until(
        lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded,
        what="the history view, loaded",
    )
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    await until(lambda: screen.history_log.max_scroll_y > 0, what="the log laid out")
    return screen


def visible_text(log: HistoryLog) -> list[str]:
    height = log.scrollable_content_region.height
    return ["".join(s.text for s in log.render_line(y)).rstrip() for y in range(height)]


def styles_of(log: HistoryLog, y: int) -> list[tuple[str, Style | None]]:
    """The segments of the log's row `y` on screen: (text, style)."""
    return [(s.text, s.style) for s in log.render_line(y) if s.text.strip()]


def marked(log: HistoryLog, y: int, mark: Style) -> list[str]:
    """The text of row `y` drawn with `mark`'s background."""
    return [t for t, s in styles_of(log, y) if s is not None and s.bgcolor == mark.bgcolor]


def status(screen: HistoryScreen) -> str:
    return str(screen.query_one("#history-status").render())


async def test_pageup_in_zoom_opens_the_history_and_escape_goes_back(
    printing: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    read = printing.client.history

    async def counted(name: str, lines: int = 10_000) -> HistoryView:
        reads.append(name)
        return await read(name, lines)

    monkeypatch.setattr(printing.client, "history", counted)
    app = SwarmApp(printing.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("pageup")  # not zoomed: a page of tiles, never the history
        await pilot.pause()
        assert len(app.screen_stack) == 1
        screen = await open_history(app, pilot)
        log = screen.history_log
        page = log.scrollable_content_region.height
        assert len(log.lines) >= LINES + 1
        # opened one page back from the agent's screen
        await until(lambda: log.max_scroll_y - log.scroll_y == page, what="one page back")
        top = int(log.scroll_y)
        assert visible_text(log)[0].startswith(f"numbered line {top + 1:05d} of Printer")
        await pilot.press("pageup")
        await until(lambda: log.scroll_y == max(0, top - page), what="a page further back")
        await pilot.press("down", "down", "down")
        await until(lambda: log.scroll_y == max(0, top - page) + 3, what="three lines on")
        await pilot.press("pagedown")
        await until(lambda: log.scroll_y == top + 3, what="a page forward")
        await pilot._post_mouse_events([events.MouseScrollUp], log, (5, 5))
        await until(lambda: log.scroll_y < top + 3, what="the wheel: back a little")
        await pilot.press("home")
        await until(lambda: log.scroll_y == 0, what="the oldest line")
        assert visible_text(log)[0] == "numbered line 00001 of Printer"
        assert "lines 1–" in status(screen) and f"of {len(log.lines)}" in status(screen)
        await pilot.press("end")
        await until(lambda: log.scroll_y == log.max_scroll_y, what="the newest line")
        assert any(t == "END of Printer" for t in visible_text(log))
        await pilot.press("pageup", "r")  # read again: the same place, counted from the end
        await until(lambda: len(reads) == 2, what="the history read again")
        await until(lambda: log.max_scroll_y - log.scroll_y == page, what="still a page back")
        await pilot.press("escape")
        await until(lambda: len(app.screen_stack) == 1, what="back in zoom")
        assert app.zoomed and app.current_name() == "Printer"


async def test_search_marks_matches_and_n_moves_between_them(printing: Live) -> None:
    app = SwarmApp(printing.client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(app, pilot)
        log = screen.history_log
        await pilot.press("slash")
        await until(lambda: isinstance(app.screen, FocusScreen), what="the search line")
        await pilot.press(*"5 of Printer", "enter")
        await until(lambda: app.screen is screen and log.matches, what="the search done")
        # lines 5, 15, ..., 395: forty matches, marked; the current one is the nearest at
        # or above the bottom of the view
        assert [y + 1 for y, _, _ in log.matches] == list(range(5, LINES + 1, 10))
        assert log.current is not None
        first = log.current
        assert f"match {first + 1}/40 for '5 of Printer'" in status(screen)

        def row_of(index: int) -> int:
            y = log.matches[index][0] - int(log.scroll_y)
            assert 0 <= y < log.scrollable_content_region.height, "the match is not in view"
            return y

        assert marked(log, row_of(first), CURRENT) == ["5 of Printer"]
        other = first - 1 if first else first + 1
        assert marked(log, row_of(other), MATCH) == ["5 of Printer"]
        assert marked(log, row_of(other), CURRENT) == []
        await pilot.press("n")
        await until(lambda: log.current == (first + 1) % 40, what="n: the next match")
        assert f"match {(first + 1) % 40 + 1}/40" in status(screen)
        row_of((first + 1) % 40)
        await pilot.press("N", "N")
        await until(lambda: log.current == (first - 1) % 40, what="N N: the previous match")
        row_of((first - 1) % 40)
        await pilot.press("home")
        for _ in range(first):  # N from the first match wraps to the last
            await pilot.press("N")
        await until(lambda: log.current == 39, what="N past the first: the last match")
        row_of(39)
        assert "match 40/40" in status(screen)
        await pilot.press("escape")
        await until(lambda: len(app.screen_stack) == 1, what="back in zoom")


async def test_copy_sends_the_selection_or_the_match_line_to_the_clipboard(
    printing: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = SwarmApp(printing.client)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    said: list[str] = []
    real_notify = app.notify
    monkeypatch.setattr(
        app, "notify", lambda text, **kw: (said.append(str(text)), real_notify(text, **kw))
    )
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(app, pilot)
        log = screen.history_log
        await pilot.press("y")  # nothing selected, no search: nothing copied, and said
        await until(lambda: said, what="a word about it")
        assert copied == [] and "nothing to copy" in said[-1]
        await pilot.press("slash", *"line 00123 ", "enter")
        await until(lambda: app.screen is screen and log.current is not None, what="a match")
        await pilot.press("y")
        await until(lambda: copied, what="the match's line copied")
        assert copied == ["numbered line 00123 of Printer"]
        assert said[-1] == "copied 1 line"
        # a mouse selection over three rows: from column 9 of the first to 6 of the third
        await pilot.press("escape")  # the search's screen is gone; this closes the view
        await until(lambda: len(app.screen_stack) == 1, what="back in zoom")
        screen = await open_history(app, pilot)
        log = screen.history_log
        await pilot.press("home")
        await until(lambda: log.scroll_y == 0, what="the oldest lines")
        await pilot.mouse_down(log, offset=(9, 0))
        await pilot.hover(log, offset=(6, 2))
        await pilot.mouse_up(log, offset=(6, 2))
        await until(lambda: screen.get_selected_text(), what="text selected")
        await pilot.press("c")
        await until(lambda: len(copied) == 2, what="the selection copied")
        assert copied[1] == (
            "line 00001 of Printer\nnumbered line 00002 of Printer\nnumbere"
        )  # to the cell under the mouse, included
        assert said[-1] == "copied 3 lines"


async def test_the_wheel_over_the_zoomed_tile_scrolls_back_into_the_history(printing: Live) -> None:
    app = SwarmApp(printing.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            lambda: (
                app.current_name() == "Printer"
                and any(t.name_shown == "Printer" and t.size.height for t in app._tiles)
            ),
            what="Printer's tile on screen",
        )
        tile = next(t for t in app._tiles if t.name_shown == "Printer")
        await pilot._post_mouse_events([events.MouseScrollUp], tile, (5, 5))
        assert len(app.screen_stack) == 1, "the wheel opened the history without zoom"
        await pilot.press("enter")
        await pilot._post_mouse_events([events.MouseScrollUp], tile, (5, 5))
        await until(
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded,
            what="the history, from the wheel",
        )
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        log = screen.history_log
        await until(
            lambda: log.max_scroll_y > 0 and log.max_scroll_y - log.scroll_y == 3,
            what="three lines back, as one turn of the wheel",
        )


class HistoryClient(FakeClient):
    """A client whose agents' histories are given (or refused with a line)."""

    def __init__(self, view, lines: list[str] | None, refusal: str = "") -> None:  # type: ignore[no-untyped-def]
        super().__init__(view)
        self.lines, self.refusal = lines, refusal

    async def history(self, name: str, lines: int = 10_000) -> HistoryView:
        self._asked("history", name=name)
        if self.refusal:
            raise Refused(self.refusal)
        return HistoryView(agent=name, lines=list(self.lines or []))


HOSTILE = [
    "before",
    "osc52 \x1b]52;c;aGFja2Vk\x07clipboard",
    "title \x1b]0;pwned\x07bell \x07 \x1b[2J\x1b[H\x1bc done",
    "c1 \x9b31m csi \x9d0;x\x9c osc \x1b[5A up",
    "\x1b[38;2;1;2;3mtruecolor\x1b[0m [bold]not markup[/bold] \t tab",
    "x" * 20_000,
    "after",
]


async def test_hostile_lines_are_drawn_as_text_only(tmp_path: Path) -> None:
    client = HistoryClient(still_fleet(tmp_path, count=2), HOSTILE)
    app = SwarmApp(client)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.press("pageup")
        await until(
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded,
            what="the history view",
        )
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        log = screen.history_log
        await pilot.press("home")
        await until(lambda: log.scroll_y == 0, what="the top")
        rows = visible_text(log)
        assert rows[:5] == [
            "before",
            "osc52 clipboard",
            "title bell   done",
            "c1  csi  osc  up",
            "truecolor [bold]not markup[/bold]   tab",
        ]
        for y in range(log.scrollable_content_region.height):
            for seg in log.render_line(y):
                assert not re.search(r"[\x00-\x1f\x7f-\x9f]", seg.text), repr(seg.text)
        # colour kept: the truecolor word is drawn in its colour
        assert any(
            t == "truecolor"
            and s is not None
            and s.color is not None
            and s.color.triplet == (1, 2, 3)
            for t, s in styles_of(log, 4)
        )
        assert rows[5] == "x" * log.scrollable_content_region.width
        assert log.virtual_size.width == MAX_WIDTH  # bounded, however long the line
        # search and copy see the text as drawn
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("slash", *"markup", "enter")
        await until(lambda: app.screen is screen and log.current is not None, what="a match")
        await pilot.press("y")
        await until(lambda: copied, what="the line copied")
        assert copied == ["truecolor [bold]not markup[/bold]   tab"]  # no escapes
        await pilot.press("end", "right")  # sideways along the long line, no crash
        await pilot.pause()


async def test_a_history_that_cannot_be_read_is_one_line_and_back_to_zoom(tmp_path: Path) -> None:
    why = (
        "Gauss runs on host node02, which is down (connection lost): its history can be "
        "read when the host is back"
    )
    client = HistoryClient(still_fleet(tmp_path, count=2), None, refusal=why)
    app = SwarmApp(client)
    said: list[str] = []
    real = app.notify
    app.notify = lambda text, **kw: (said.append(str(text)), real(text, **kw))  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter", "pageup")
        await until(lambda: said, what="the refusal said")
        await until(lambda: len(app.screen_stack) == 1, what="back in zoom")
        assert said == [f"history of Gauss: {why}"] and app.zoomed


def test_search_is_plain_text_and_smart_case() -> None:
    lines = ["Error here", "an error", "(a+)+$ literal", "ERROR"]
    assert [y for y, _, _ in find(lines, "error")] == [0, 1, 3]
    assert [y for y, _, _ in find(lines, "Error")] == [0]
    assert find(lines, "(a+)+$") == [(2, 0, 6)]  # a pattern is text here, never a regex
    assert find(lines, "") == []


async def test_search_input_gets_the_letters_the_view_binds(printing: Live) -> None:
    """n, N, y, c and q typed into the search line are text, not the view's keys."""
    app = SwarmApp(printing.client)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_history(app, pilot)
        await pilot.press("slash")
        await until(lambda: isinstance(app.screen, FocusScreen), what="the search line")
        await pilot.press(*"nNycq")
        field = app.screen.query_one(Input)
        await until(lambda: field.value == "nNycq", what="the letters typed")
        await pilot.press("escape")
        await until(lambda: app.screen is screen, what="the search line closed")
        assert screen.query_text == ""


async def test_an_answer_too_big_for_the_client_is_said_not_left_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine's answer longer than the client's line limit: readline gives up with a
    ValueError, which once escaped the request and left the screen at "reading…" for
    good. It is one line now, and the screen goes."""
    import tempfile

    from swarm_tui.protocol import client as client_module

    monkeypatch.setattr(client_module, "LINE_LIMIT", 64 * 1024)

    async def engine(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        lines = ["\x1b[31m" + "─" * 100] * 1000  # far past the limit, once JSON-escaped
        writer.write(json.dumps({"ok": True, "agent": "Gauss", "lines": lines}).encode() + b"\n")
        await writer.drain()
        writer.close()

    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket path has 108 bytes
        sock = Path(short) / "e.sock"
        server = await asyncio.start_unix_server(engine, path=str(sock))
        client = FakeClient(still_fleet(tmp_path, count=2))
        client.socket = sock  # history goes to that engine, as FleetClient sends it
        app = SwarmApp(client)
        said: list[str] = []
        real = app.notify
        app.notify = lambda text, **kw: (said.append(str(text)), real(text, **kw))  # type: ignore[method-assign]
        try:
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.press("enter", "pageup")
                await until(lambda: said, what="what happened, said")
                await until(lambda: len(app.screen_stack) == 1, what="back in zoom")
                assert said == [
                    "history of Gauss: the swarm engine's answer to 'history' is over 0.0625 MB, "
                    "more than this view takes; it was dropped"
                ]
        finally:
            server.close()
            await server.wait_closed()
