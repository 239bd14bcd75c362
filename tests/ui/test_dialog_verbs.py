"""The fleet view's one-line dialogs say what enter does (g goes, / filters, / in an agent's
history searches), and an answer's notice names the option as its tile showed it: a label
the agent's window cut off ends with `…`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.history import HistoryScreen
from swarm_tui.ui.prompt import FocusScreen
from tests.ui.conftest import FakeClient, still_fleet, text_of, until
from tests.ui.test_history_view import HistoryClient


async def says(app: SwarmApp, hint: str) -> None:
    await until(
        lambda: isinstance(app.screen, FocusScreen) and app.screen.query("#prompt-help"),
        what="the one-line dialog",
    )
    label = app.screen.query_one("#prompt-help")
    await until(lambda: text_of(label) == hint, what=hint, detail=lambda: text_of(label))


async def test_go_filter_and_search_say_what_enter_does(tmp_path: Path) -> None:
    app = SwarmApp(HistoryClient(still_fleet(tmp_path, count=3), ["a line"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("g")
        await says(app, "enter go · esc cancel")
        await pilot.press("escape", "slash")
        await says(app, "enter filter · esc cancel")
        await pilot.press("escape", "enter", "pageup")  # zoomed: the agent's history
        await until(
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded,
            what="the history view",
        )
        await pilot.press("slash")
        await says(app, "enter search · esc cancel")


class CutClient(FakeClient):
    """Answers as the engine does: the option named as its screen reading has it."""

    async def answer(
        self, name: str, choice: str, question: str | None = None, options: Any = None
    ) -> dict[str, Any]:
        self._asked("answer", name=name, choice=choice)
        return {"ok": True, "option": "2. No, and tell the agent what to do dif", "asks": ""}


async def test_an_answer_cut_by_the_window_is_said_with_an_ellipsis(tmp_path: Path) -> None:
    view = still_fleet(tmp_path, count=4)
    cut = "No, and tell the agent what to do dif"  # the mock's 44-column window cut it
    view.agents["Noether"] = view.agents["Noether"].model_copy(
        update={"options": [("1", "Yes"), ("2", cut)]}
    )
    view.screens["Noether"] = [
        "╭" + "─" * 42 + "╮",
        "│ Run `pytest -q`?",
        "│   1. Yes",
        f"│   2. {cut}",
        "╰" + "─" * 42 + "╯",
    ]
    app = SwarmApp(CutClient(view))
    async with app.run_test(size=(160, 48)) as pilot:
        app.select_name("Noether")
        await pilot.press("2")
        said = "Noether: answered 2. No, and tell the agent what to do…"
        await until(
            lambda: said in [n.message for n in app._notifications],
            what=said,
            detail=lambda: repr([n.message for n in app._notifications]),
        )
