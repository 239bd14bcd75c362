"""A long yes/no question wraps inside its box at 80 columns: never cut at the screen's
edge (an overwrite's path, a merge refusal)."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.confirm import ConfirmScreen
from tests.ui.conftest import FakeClient, still_fleet, text_of, until

QUESTION = (
    "Overwrite /home/someone/.config/swarm/layouts/a-rather-long-fleet-name-for-"
    "the-night.toml, saved 3 hours ago by another swarm, with this fleet as it is?"
)


async def test_a_long_question_wraps_in_its_box(tmp_path: Path) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=2)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app._laid_out, what="the fleet laid out")
        app.push_screen(ConfirmScreen(QUESTION))
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.pause()
        label = app.screen.query_one("#confirm-question")
        box = app.screen.query_one("#prompt-box")
        assert label.region.right <= box.region.right and label.region.height >= 2
        shown = "".join(text_of(label).split())
        assert shown == "".join(QUESTION.split())  # every word, none cut
