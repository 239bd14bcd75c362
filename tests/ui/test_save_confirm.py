"""`S` never overwrites a layout without asking: a second save of the same name asks, `n`
keeps the file as it is, `y` replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from tests.ui.conftest import Live, plain_of, until


async def test_a_second_save_asks_before_overwriting(
    live: Live, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    target = tmp_path / "config" / "swarm" / "layouts" / "mine.toml"
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()

        async def save() -> None:
            await pilot.press("S")
            await pilot.pause()
            await pilot.press("ctrl+u", *"mine", "enter")
            await pilot.pause()

        await save()
        await until(target.exists, what="the first save")
        target.write_text("# the user's own edits\n" + target.read_text())
        await save()
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "exists. Overwrite it?" in plain_of(app.screen.query_one("#confirm-question"))
        await pilot.press("n")
        await pilot.pause()
        assert target.read_text().startswith("# the user's own edits")
        await save()
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await until(
            lambda: not target.read_text().startswith("# the user's own edits"),
            what="the overwrite",
        )
        assert "[[agents]]" in target.read_text()
