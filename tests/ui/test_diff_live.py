"""The diff view on a real engine: a mock agent in its own git worktree of a temporary
repository; a file written into that worktree is shown by `d` (read by the engine from git
just then), and a comment sent with enter reaches the agent through its queue, journaled;
the view follows the review to its delivery, and once the agent's turn on it ends it reads
the change again by itself (a file written meanwhile shows without `r`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.diff import DiffScreen
from swarm_tui.ui.prompt import FocusScreen
from tests.ui.conftest import FAST, Live, received, start_live, stop_live, until
from tests.ui.diffrepo import git

NOTE = "def checked(value: int) -> bool:\n    return value > 41\n"


@pytest.fixture
async def worktree_fleet(tmp_path: Path, swarm_home: Path) -> AsyncIterator[Live]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def answer():\n    return 41\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    layout = tmp_path / "wt.toml"
    layout.write_text(
        'name = "wtui"\n[[agents]]\nname = "Gauss"\ncli = "mock"\nfocus = "checks"\n'
        f'args = {FAST}\nenv = {{ SWARM_MOCK_LOG = "{tmp_path / "Gauss.log"}" }}\n'
        f'worktree = true\nrepo = "{repo}"\n'
    )
    live = await start_live(layout, swarm_home)
    try:
        yield live
    finally:
        await stop_live(live)


async def test_d_shows_the_worktree_and_a_review_reaches_the_agent(
    worktree_fleet: Live, tmp_path: Path
) -> None:
    live = worktree_fleet
    workdir = Path(live.fleet.agents["Gauss"].workdir)
    assert git(workdir, "symbolic-ref", "--short", "HEAD").strip() == "swarm/wtui/Gauss"
    (workdir / "checked.py").write_text(NOTE)  # untracked, written after the agent started
    await until(
        lambda: live.view.agents["Gauss"].changes is not None,
        what="the engine's first reading of Gauss's change",
    )
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: app.current_name() == "Gauss", what="Gauss selected")
        await pilot.press("d")
        await until(lambda: isinstance(app.screen, DiffScreen), 30, "the diff view")
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        log = screen.diff_log
        await until(lambda: log.rows, what="the change drawn")

        def rows() -> list[str]:
            return ["".join(s.text for s in log._strip(i)).rstrip() for i in range(len(log.rows))]

        assert "  checked.py  +2  new, untracked" in rows()
        assert "      2 +    return value > 41" in rows()
        want = rows().index("      2 +    return value > 41")
        for _ in range(want):
            await pilot.press("down")
        await until(lambda: log.cursor == want, what="the cursor on the line")
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, FocusScreen), what="the comment line")
        await pilot.press(*"say why 41", "enter")
        await until(lambda: screen.comments, what="the comment written")
        (workdir / "later.py").write_text("LATER = 1\n")  # after the view read the change
        assert not any("later.py" in r for r in rows())
        await pilot.press("enter")
        text = "Review of your change:\nchecked.py:2: say why 41"
        await until(
            lambda: text in received(tmp_path, "Gauss"),
            30,
            "the review delivered to Gauss",
            detail=lambda: repr(received(tmp_path, "Gauss")),
        )
        assert not screen.comments
        # the message delivered (said until the change is next read), then the agent idle
        # again: the change read again by itself, the review's word gone with it
        await until(
            lambda: screen.review is None or screen.review.delivered,
            30,
            "the review followed to its delivery",
        )
        assert not screen.said and not screen.comments  # (not refused, nothing came back)
        await until(
            lambda: ["later.py", "+1", "new,", "untracked"] in [r.split() for r in rows()],
            30,
            "the change read again when Gauss went idle",
            detail=lambda: "\n".join(rows()),
        )
        await until(lambda: screen.review is None, what="the review's word gone")
        journal = [m for m in live.store.messages(limit=20) if m.recipient == "Gauss"]
        assert [m.text for m in journal if m.text.startswith("Review of")] == [text]
