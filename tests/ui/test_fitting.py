"""Lines that fit their width: the status line keeps what matters most and never cuts a word,
the footer shows the keys that fit, a tile's title keeps the time an agent has waited, and
the sidebar says every agent's state the same way, clear of its scrollbar."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.fit import Part, clip, fit
from swarm_tui.ui.tiles import tile_title
from tests.ui.conftest import FakeClient, still_fleet, text_of, until

# every part the status line may show, whole
STATUS_PART = re.compile(
    r"(page|agent) \d+/\d+|\d+ agents|\d+ (need you|exited|working|idle|starting|unreachable)"
    r"|zoomed( \(enter to return\))?|filter '[^']*': \d+ shown( \(/ to change\))?"
    r"|filtered: \d+ shown|\d+ marked|\d+ hosts? down"
)


def status_of(app: SwarmApp) -> str:
    return str(app._status.render()).strip()


def whole_parts(status: str) -> bool:
    return all(STATUS_PART.fullmatch(part) for part in status.split(" · "))


def test_clip_ends_at_a_word_with_an_ellipsis() -> None:
    assert clip("No, and tell the agent what to do", 99) == "No, and tell the agent what to do"
    assert clip("No, and tell the agent what to do", 30) == "No, and tell the agent what…"
    assert clip("3 need you · 9 idle", 14) == "3 need you…"
    assert clip("Kovalevskaya", 6) == "Koval…"  # one word wider than the room


def test_fit_gives_up_the_highest_rank_first_and_hints_before_all() -> None:
    parts = [
        Part(("page 1/2",), 0),
        Part(("12 agents", ""), 10),
        Part(("3 need you", ""), 1),
        Part(("zoomed (enter to return)", "zoomed", ""), (20, 3)),
    ]
    assert fit(parts, 0).plain == "page 1/2 · 12 agents · 3 need you · zoomed (enter to return)"
    assert fit(parts, 50).plain == "page 1/2 · 12 agents · 3 need you · zoomed"
    assert fit(parts, 35).plain == "page 1/2 · 3 need you · zoomed"
    assert fit(parts, 25).plain == "page 1/2 · 3 need you"
    assert fit(parts, 9).plain == "page 1/2"


async def test_zoomed_the_status_line_says_which_agent(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("right", "right", "right", "enter")
        await until(
            lambda: status_of(app).startswith("agent 4/12"),
            what="agent 4 of 12",
            detail=lambda: status_of(app),
        )
        assert "zoomed (enter to return)" in status_of(app)
        await pilot.press("pagedown")
        await until(
            lambda: status_of(app).startswith("agent 5/12"),
            what="pgdn: the next",
            detail=lambda: status_of(app),
        )
        await pilot.press("left_square_bracket", "left_square_bracket")
        await until(
            lambda: status_of(app).startswith("agent 3/12"),
            what="[ twice: back 2",
            detail=lambda: status_of(app),
        )
        await pilot.press("enter")
        await until(
            lambda: status_of(app).startswith("page 1/"),
            what="the page again",
            detail=lambda: status_of(app),
        )


@pytest.mark.parametrize(
    ("size", "keys"),
    [
        ((80, 24), []),
        ((120, 40), ["enter"]),
        ((120, 40), ["slash", *"needs", "enter"]),
        ((80, 24), ["slash", *"needs", "enter", "space", "enter"]),
    ],
)
async def test_the_status_line_fits_its_width_in_whole_parts(
    tmp_path: Path, size: tuple[int, int], keys: list[str]
) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    async with app.run_test(size=size) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        await pilot.press(*keys)
        await pilot.pause()
        status = status_of(app)
        assert len(status) + 1 <= app._status.size.width, status
        assert whole_parts(status), status
        assert "need you" in status  # what needs a human is kept longest
        if "slash" in keys:
            assert "shown" in status
        if "enter" in keys and "slash" not in keys:
            assert "zoomed" in status


def footer_keys(app: SwarmApp) -> list[FooterKey]:
    return [k for k in app.screen.query(FooterKey) if k.display]


async def test_the_footer_shows_only_whole_keys(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    async with app.run_test(size=(80, 30)) as pilot:
        for width in (80, 120, 200):
            await pilot.resize_terminal(width, 30)
            await until(lambda w=width: app._laid_out and app.size.width == w, what="laid out")
            await pilot.pause()
            await until(lambda: all(k.region.width for k in footer_keys(app)), what="keys")
            palette = next(k for k in footer_keys(app) if k.has_class("-command-palette"))
            keys = [k for k in footer_keys(app) if k is not palette]
            assert all(k.region.right <= palette.region.x for k in keys), [
                (k.description, k.region) for k in keys
            ]
            shown = {k.description for k in keys}
            assert {"Help", "Quit", "Zoom", "Prompt"} <= shown  # the most used stay
        assert len(keys) == 12  # wide, every one


def still(tmp: Path) -> FleetView:
    view = still_fleet(tmp, count=12)
    now = time.time()
    # Kovalevskaya waits on a dialog; the others' screens have been quiet for a while
    for name, ago in (("Gauss", 30), ("Hilbert", 225), ("Euler", 12), ("Riemann", 4000)):
        view.agents[name] = view.agents[name].model_copy(
            update={"last_output": now - ago, "state_since": now - ago}
        )
    return view


def test_a_tile_title_keeps_the_clock_and_shortens_the_state() -> None:
    now = time.time()
    asks = AgentView(
        name="Poincaré", role="worker", state="needs-permission", state_since=now - 250, queued=2
    )
    assert tile_title(asks, False, None, 0, now) == "? Poincaré · needs-permission 4m10s · 2 queued"
    assert tile_title(asks, False, None, 30, now) == "? Poincaré · needs you 4m10s"
    assert tile_title(asks, False, None, 22, now) == "? Poincaré · 4m10s"


async def test_a_narrow_tile_keeps_the_time_an_agent_has_waited(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=12)))
    async with app.run_test(size=(62, 24)) as pilot:  # one tile, 38 wide
        await until(lambda: app._laid_out, what="the first layout")
        app.select_name("Kovalevskaya")  # asks, waiting 2h2m
        await pilot.pause()
        tile = next(t for t in app._tiles if t.name_shown == "Kovalevskaya")
        await until(
            lambda: "2h2m" in text_of(tile).splitlines()[0],
            what="the clock",
            detail=lambda: text_of(tile).splitlines()[0],
        )
        assert "needs you 2h2m" in text_of(tile).splitlines()[0]


def banner_words(app: SwarmApp, name: str) -> list[str]:
    tile = next(t for t in app._tiles if t.name_shown == name)
    line = next((ln for ln in text_of(tile).splitlines() if "[y/n/1-2]" in ln), "")
    return line.strip(" │┃║").split()


async def test_a_dialog_bar_is_cut_at_a_word_and_fits_again_when_wider(tmp_path: Path) -> None:
    """At 80x24 the bar under an asking agent read `… · t attac┃`: cut mid-word by the tile.
    It is fitted to the tile at a word's end (`t attaches` goes first), and again when the
    tile grows."""
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=12)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        app.select_name("Noether")  # asks
        await pilot.pause()
        await until(lambda: banner_words(app, "Noether"), what="the dialog's bar")
        narrow = banner_words(app, "Noether")
        full = ["[y/n/1-2]", "1", "Yes", "·", "2", "No,", "and", "tell", "the", "agent"]
        assert narrow[-1] != "attac" and "attaches" not in narrow, narrow
        words = [w.removesuffix("…") for w in narrow]
        assert words == [w.removesuffix("…") for w in full][: len(words)], narrow
        await pilot.resize_terminal(200, 55)
        await pilot.press("z")  # zoomed: the whole width
        await until(
            lambda: banner_words(app, "Noether")[-2:] == ["t", "attaches"],
            what="the whole bar in a wide tile",
            detail=lambda: repr(banner_words(app, "Noether")),
        )


def agent_rows(sidebar_text: str, names: list[str]) -> list[str]:
    return [
        line
        for line in sidebar_text.splitlines()
        if any(f" {n} " in line or f" {n[:8]}" in line for n in names)
    ]


async def test_the_sidebar_says_every_state_alike_and_clear_of_its_scrollbar(
    tmp_path: Path,
) -> None:
    view = still(tmp_path)
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app._laid_out, what="the first layout")
        await pilot.pause()
        sidebar = app._sidebar
        await until(lambda: sidebar.show_vertical_scrollbar, what="a scrollbar (24 rows)")
        rows = agent_rows(text_of(sidebar), list(view.agents))
        assert len(rows) >= 6, text_of(sidebar)
        words = ("working", "idle", "needs", "exited", "starting")
        with_word = [r for r in rows if any(w in r for w in words)]
        assert with_word in ([], rows), rows  # every row with its state's word, or none
        # clocks in whole minutes after the first (a fleet at rest redraws a row a minute)
        assert any(" 3m" in r and "3m45s" not in r for r in rows), rows
        assert any("30s" in r for r in rows), rows
        # the column left of the scrollbar is blank: no clock runs into its thumb
        bar = sidebar.scrollable_content_region.right - sidebar.region.x
        assert all(
            line[bar - 1] == " " for line in text_of(sidebar).splitlines() if len(line) >= bar
        ), text_of(sidebar)


@pytest.mark.parametrize(
    "line",
    [
        "A017 T 1764970000.123456",
        "",
        "   indented",
        "wide 日本語 x",
        "tab\there",
        "bell\x07x",
        "\x1b[31mred\x1b[0m plain",
        "\x1b[1;38;5;208mbold orange\x1b[0m",
    ],
)
def test_a_plain_line_is_drawn_as_rich_decodes_it(line: str) -> None:
    """A line with nothing to decode skips Rich's ANSI decoder; what it draws is the same."""
    from rich.text import Text

    from swarm_tui.ui.tiles import CONSOLE, _segments

    text = Text.from_ansi(line, end="")
    text.no_wrap = True
    decoded = tuple(seg for seg in text.render(CONSOLE) if seg.text != "\n")
    _segments.cache_clear()
    assert _segments(line) == decoded
