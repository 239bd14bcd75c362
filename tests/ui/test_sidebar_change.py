"""The size of an agent's change in the sidebar, under its name at the right of its focus
label: whole where there is room (`+120 −14 5f ⚠ conflict`), then shorter forms as the
sidebar narrows (`+120 −14 5f ⚠`, `+120 −14 ⚠`, `5f ⚠`, `⚠`), a count never cut and never a
sign without its number; the focus label keeps its room first; the help says what the
counts and the mark are; a new size drawn at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.style import Style

from swarm_tui.protocol.models import ChangeView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.help import HelpScreen
from swarm_tui.ui.sidebar import Sidebar, change_fitted, change_parts
from tests.ui.conftest import still_fleet, text_of, until
from tests.ui.diffrepo import DiffClient, with_worktrees

BIG = ChangeView(added=120, deleted=14, files=5, conflicts=True)
SIGN_ALONE = re.compile(r"[+−](?!\d)|(?<![\d])f\b")  # a sign, or an `f`, with no number


def fitted(change: ChangeView, room: int) -> str:
    return " ".join(t for t, _ in change_fitted(change_parts(change), room))


def test_each_room_gets_the_longest_form_that_fits() -> None:
    forms = {room: fitted(BIG, room) for room in range(0, 30)}
    assert forms[22] == "+120 −14 5f ⚠ conflict"
    assert forms[13] == "+120 −14 5f ⚠"
    assert forms[10] == "+120 −14 ⚠"
    assert forms[4] == "5f ⚠"
    assert forms[1] == "⚠"
    assert forms[0] == ""
    plain = ChangeView(added=120, deleted=14, files=5)
    assert [fitted(plain, r) for r in (11, 8, 2, 1)] == ["+120 −14 5f", "+120 −14", "5f", ""]
    assert fitted(ChangeView(added=3, files=1), 6) == "+3 1f"
    for room, form in forms.items():
        assert len(form) <= room
        assert not SIGN_ALONE.search(form), form
        assert form in ("", "⚠", "5f ⚠", "+120 −14 ⚠", "+120 −14 5f ⚠", "+120 −14 5f ⚠ conflict"), (
            form
        )
    # more room never gives less
    assert all(len(forms[r]) <= len(forms[r + 1]) for r in range(29))


def sidebar_rows(app: SwarmApp, name: str) -> list[str]:
    """The agent's two rows, as drawn inside the sidebar's padding and border."""
    lines = text_of(app.query_one(Sidebar)).splitlines()
    start = next(i for i, ln in enumerate(lines) if f" {name} " in ln)
    return [ln[1:].rstrip(" │") for ln in lines[start : start + 2]]


def fleet(tmp_path: Path) -> DiffClient:
    view = with_worktrees(
        still_fleet(tmp_path, count=5),
        Gauss=BIG,
        Hilbert=ChangeView(added=6, files=1, conflicts=True),
        Noether=ChangeView(added=3, files=1),
        Euler=ChangeView(),
        Riemann=ChangeView(added=2, files=1, conflicts=True),
    )
    view.agents["Riemann"] = view.agents["Riemann"].model_copy(update={"focus": "docs"})
    return DiffClient(view)


@pytest.mark.parametrize(
    ("size", "rows"),
    [
        ((80, 24), ["   focus of…     5f ⚠", "   focus of…  +6 1f ⚠", "   docs       +2 1f ⚠"]),
        (
            (110, 30),
            [
                "   focus of…  +120 −14 5f ⚠",
                "   focus of Hilbert +6 1f ⚠",
                "   docs    +2 1f ⚠ conflict",
            ],
        ),
        (
            (120, 40),
            [
                "   focus of Gauss     +120 −14 5f ⚠",
                "   focus of Hilbert         +6 1f ⚠",
                "   docs            +2 1f ⚠ conflict",
            ],
        ),
    ],
)
async def test_the_sidebar_says_each_change_as_its_width_allows(
    tmp_path: Path, size: tuple[int, int], rows: list[str]
) -> None:
    """The word `conflict` only beside a whole focus label; a label cut at a word."""
    app = SwarmApp(fleet(tmp_path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        sidebar = app.query_one(Sidebar)
        await until(
            lambda: [sidebar_rows(app, n)[1] for n in ("Gauss", "Hilbert", "Riemann")] == rows,
            what="the changes drawn",
            detail=lambda: text_of(sidebar),
        )
        assert sidebar_rows(app, "Noether")[1].endswith(" +3 1f")
        assert not re.search(r"[+−]\d", "\n".join(sidebar_rows(app, "Euler")))  # nothing
        # the conflict's mark in the theme's error colour (an exited agent's), bold
        row = 1 + next(i for i, ln in enumerate(text_of(sidebar).splitlines()) if " Gauss " in ln)
        error = sidebar.colours()["exited"].split()[-1]
        assert any(
            s.text.startswith("⚠")
            and s.style is not None
            and s.style.color == Style.parse(error).color
            and s.style.bold
            for s in sidebar.render_line(row)
        )


async def test_a_new_size_is_drawn_at_once(tmp_path: Path) -> None:
    client = fleet(tmp_path)
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await until(
            lambda: sidebar_rows(app, "Gauss")[1].endswith("+120 −14 5f ⚠"), what="Gauss's change"
        )
        assert client.view is not None
        client.view.agents["Gauss"] = client.view.agents["Gauss"].model_copy(
            update={"changes": ChangeView(added=121, deleted=14, files=5, conflicts=False)}
        )
        app.bridge.agents.add("Gauss")
        app.bridge.wake()
        await until(
            lambda: sidebar_rows(app, "Gauss")[1].endswith("+121 −14 5f"),
            what="the new size",
            detail=lambda: text_of(app.query_one(Sidebar)),
        )


async def test_the_help_says_what_the_conflict_mark_is(tmp_path: Path) -> None:
    app = SwarmApp(fleet(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help")
        await until(lambda: app.screen.query("#help-table"), what="its table")
        text = " ".join(text_of(app.screen.query_one("#help-table")).split())
        assert (
            "an agent's change in its worktree (d); a click puts the cursor on a line "
            "in the sidebar, its size: +120 −14 5f (lines added, deleted; files), then ⚠ "
            "when its branch conflicts with its base" in text
        )
