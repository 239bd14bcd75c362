"""`M` in the diff view: the engine is asked what a merge would do before the question, so
the question says it (files no merge takes included) and a refusal comes at once, not after a
yes; a task not complete asks "merge anyway" and a yes forces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.protocol.models import DiffView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from tests.ui.conftest import text_of, until
from tests.ui.diffrepo import real_change
from tests.ui.test_diff_view import client_for, open_diff, said_by


@pytest.fixture
def change(tmp_path: Path) -> DiffView:
    return real_change(tmp_path)


def question(app: SwarmApp) -> str:
    return "\n".join(
        ln.rstrip() for ln in text_of(app.screen.query_one("#confirm-question")).splitlines()
    )


async def test_merge_asks_with_what_it_would_do_then_says_what_was_done(
    tmp_path: Path, change: DiffView
) -> None:
    client = client_for(tmp_path, change)
    client.would = (
        "would merge 3 commit(s) of swarm/ui/Gauss into main; 1 uncommitted "
        "file(s) stay in Gauss's worktree"
    )
    app = SwarmApp(client)
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("M")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert question(app) == (
            "Merge swarm/ui/Gauss → main (+6 −3, 5 files committed)?\n"
            "Would merge 3 commit(s) of swarm/ui/Gauss into main; 1 uncommitted file(s) "
            "stay in Gauss's worktree."
        )
        assert client.asked("merge-check") == [
            {"name": "Gauss", "into": "", "squash": False, "force": False}
        ]
        await pilot.press("n")
        await until(lambda: app.screen is screen, what="not merged")
        assert client.asked("merge") == []
        await pilot.press("M")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await until(lambda: client.asked("merge"), what="the merge asked")
        assert client.asked("merge") == [
            {"name": "Gauss", "into": "", "squash": False, "force": False}
        ]
        await until(lambda: client.merged in said, what="what was done, said")
        await until(lambda: len(client.asked("diff")) == 2, what="the change read again")


async def test_a_refusal_comes_before_any_question(tmp_path: Path, change: DiffView) -> None:
    client = client_for(tmp_path, change)
    client.merge_refusal = "swarm/ui/Gauss conflicts with main in src/app.py: nothing was merged"
    app = SwarmApp(client)
    said = said_by(app)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_diff(app, pilot)
        await pilot.press("M")
        await until(lambda: said and said[-1].startswith("not merged"), what="the refusal")
        assert said[-1] == f"not merged: {client.merge_refusal}"
        assert app.screen is screen and client.asked("merge") == []
        assert len(client.asked("merge-check")) == 2  # as asked, then forced: refused both


async def test_a_task_not_complete_asks_merge_anyway_and_yes_forces_it(
    tmp_path: Path, change: DiffView
) -> None:
    client = client_for(tmp_path, change)
    client.gate = "Gauss's task #2 is working, not complete: nothing was merged"
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_diff(app, pilot)
        await pilot.press("M")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert question(app) == (
            "Gauss's task #2 is working, not complete: nothing was merged.\n"
            "Merge anyway: swarm/ui/Gauss → main (+6 −3, 5 files committed)?"
        )
        await pilot.press("y")
        await until(lambda: client.asked("merge"), what="the forced merge")
        assert client.asked("merge")[0]["force"] is True
