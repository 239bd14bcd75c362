"""The help screen's legend: every state an agent can be in, with its glyph and its colour
exactly as the tile borders, the sidebar and the status line draw it."""

from __future__ import annotations

from pathlib import Path

from rich.color import Color as RichColor
from rich.console import Console
from rich.segment import Segment
from textual.color import Color

from swarm_tui.agents.base import AgentState
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.help import HelpScreen
from swarm_tui.ui.tiles import STATE_CLASSES, STATE_MARKS
from tests.ui.conftest import FakeClient, still_fleet, until


def legend_rows(help_screen: HelpScreen) -> dict[str, list[Segment]]:
    """The legend as drawn: each row's segments, by the state word in it."""
    console = Console(width=110, color_system="truecolor", force_terminal=True)
    lines = console.render_lines(help_screen.body().renderables[1], pad=False)
    rows = {}
    for line in lines:
        words = [seg.text.strip() for seg in line]
        for state in AgentState:
            if state.value in words:
                rows[state.value] = line
    return rows


def hex_of(colour: RichColor | None) -> str:
    assert colour is not None and colour.triplet is not None
    return colour.triplet.hex.upper()


async def test_every_state_has_its_glyph_and_real_colour_in_the_legend(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=3)))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        tile = app._tiles[-1]  # showing no agent: only the test sets its classes
        sidebar = app._sidebar.colours()
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        assert isinstance(app.screen, HelpScreen)
        rows = legend_rows(app.screen)
        assert sorted(rows) == sorted(s.value for s in AgentState)  # a row for each state
        for state in AgentState:
            glyph, word = (
                next(seg for seg in rows[state] if seg.text.strip() == text)
                for text in (STATE_MARKS[state], state.value)
            )
            assert glyph.style == word.style
            colour = hex_of(word.style.color if word.style else None)
            # the sidebar's and the status line's colour (one table for both)
            assert colour == hex_of(RichColor.parse(sidebar[state].split()[-1])), state
            # the tile border's, as the stylesheet draws a tile in that state
            for selected in (False, True):
                for cls in STATE_CLASSES.values():
                    tile.set_class(cls == STATE_CLASSES[state], cls)
                tile.set_class(selected, "-selected")
                await pilot.pause()
                border = tile.styles.border_top[1]
                assert isinstance(border, Color)
                assert border.hex.upper() == colour, (state, "selected" if selected else "")


async def test_the_legend_explains_the_sidebar_marks(tmp_path: Path) -> None:
    """A new user saw `⏰ 19m`, `▸ in-progress` and `✉1 0s` with nothing saying what they are."""
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=3)))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=110, force_terminal=False)
        with console.capture() as out:
            console.print(app.screen.body().renderables[1])
        text = " ".join(out.get().split())
        for mark in ("✉3 5m: three messages queued", "▸ its task and round", "⏰ its next"):
            assert mark in text, text
