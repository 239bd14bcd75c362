"""`F` ends the selected agent's conversation (a fresh start): it asks first. `n` or escape
leave the agent as it is; `y` begins it, for the agent that was selected when F was pressed."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from tests.ui.conftest import FakeClient, plain_of, still_fleet, until


async def test_f_asks_before_a_fresh_start(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path))
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.select_name("Hilbert")
        for no in ("n", "escape"):
            await pilot.press("F")
            await until(lambda: isinstance(app.screen, ConfirmScreen), 5, "the question")
            question = plain_of(app.screen.query_one("#confirm-question"))
            assert question.startswith("Fresh start of Hilbert?")
            await pilot.press(no)
            await until(lambda: not isinstance(app.screen, ConfirmScreen), 5, "closed")
            assert client.asked("fresh") == []
        await pilot.press("F")
        await until(lambda: isinstance(app.screen, ConfirmScreen), 5, "the question again")
        await pilot.press("y")
        await until(lambda: client.asked("fresh") != [], 5, "the fresh start")
        assert client.asked("fresh") == [{"name": "Hilbert", "handoff": True}]
