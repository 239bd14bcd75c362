"""Snapshots of the fleet view on a still fleet (recorded screens, fixed states), as a client
with no engine behind it sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.ui.app import SwarmApp
from tests.ui.conftest import FakeClient, still_cluster, still_fleet, still_judged


def test_fleet_view(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(SwarmApp(FakeClient(still_fleet(tmp_path))), terminal_size=(160, 48))


def test_zoomed_agent(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 36), press=["right", "right", "enter"])


def test_prompt_over_marked_agents(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from textual.widgets import TextArea

    app = SwarmApp(FakeClient(still_fleet(tmp_path)))

    async def type_a_prompt(pilot) -> None:  # type: ignore[no-untyped-def]
        from swarm_tui.ui.prompt import PromptScreen
        from tests.ui.conftest import until

        await pilot.press("space", "right", "space", "i")
        await until(lambda: isinstance(app.screen, PromptScreen), what="the prompt")
        # a steady cursor: a blinking one is drawn or not by when the picture is taken (a
        # slow machine took it in the dark half of a blink)
        app.screen.query_one(TextArea).cursor_blink = False
        await pilot.press(*"run the tests", "ctrl+j", *"then report")

    assert snap_compare(app, terminal_size=(160, 48), run_before=type_a_prompt)


def test_small_terminal_pages(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=16)))
    assert snap_compare(app, terminal_size=(100, 30), press=["pagedown"])


def test_cluster_grouped_by_node(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(SwarmApp(FakeClient(still_cluster(tmp_path))), terminal_size=(170, 44))


def test_judge_pane_and_task_status(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(SwarmApp(FakeClient(still_judged(tmp_path))), terminal_size=(170, 44))


def test_help_lists_every_key(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = SwarmApp(FakeClient(still_fleet(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 40), press=["question_mark"])


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 55), (300, 80)])
def test_every_terminal_size(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    """From 80x24 up: the sidebar narrows, tiles never go below their minimum width (fewer
    per page instead), the status line counts agents by state."""
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=16)))
    assert snap_compare(app, terminal_size=size)


def test_sidebar_hidden_at_80_columns(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=16)))
    assert snap_compare(app, terminal_size=(80, 24), press=["b"])


def test_diff_view(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An agent's change (a real git diff: Python coloured, a rename, a binary file, the
    uncommitted part apart), a conflict, the cursor on a line with a comment under it."""
    from swarm_tui.protocol.models import ChangeView
    from swarm_tui.ui.diff import DiffScreen
    from tests.ui.conftest import until
    from tests.ui.diffrepo import DiffClient, real_change, with_worktrees

    change = real_change(tmp_path / "git").model_copy(update={"conflicts": ["src/app.py"]})
    view = with_worktrees(still_fleet(tmp_path), Gauss=ChangeView(added=10, deleted=4, files=6))
    app = SwarmApp(DiffClient(view, change))

    async def open_and_comment(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("d")
        await until(
            lambda: isinstance(app.screen, DiffScreen) and app.screen.diff_log.rows,
            what="the diff view",
        )
        await pilot.press("]", "]", "]", *["down"] * 5, "c", *"json is not used", "enter")
        await until(
            lambda: isinstance(app.screen, DiffScreen) and app.screen.comments,
            what="the comment written",
        )

    assert snap_compare(app, terminal_size=(120, 40), run_before=open_and_comment)
