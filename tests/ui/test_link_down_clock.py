"""A tile whose host's link is down says for how long, and that clock ticks.

The title was redrawn only when something else changed, so during an outage it read
`link down for 0s`, `0s`, `9s`, `16s`, `16s` in captures five seconds apart (seen in a
new-user trial). It now counts up every second like a dialog's wait does."""

from __future__ import annotations

import re
import time
from pathlib import Path

from swarm_tui.ui.app import SwarmApp
from tests.ui.conftest import FakeClient, still_cluster, text_of, until


def down_for(app: SwarmApp) -> int | None:
    found = re.search(r"link down for (\d+)s", text_of(app.screen))
    return int(found[1]) if found else None


async def test_the_link_down_clock_ticks(tmp_path: Path) -> None:
    view = still_cluster(tmp_path)
    view.hosts["node02"] = view.hosts["node02"].model_copy(update={"since": time.time()})
    app = SwarmApp(FakeClient(view))
    async with app.run_test(size=(200, 55)) as pilot:
        await pilot.pause()
        await until(
            lambda: down_for(app) is not None,
            what="a tile of node02",
            detail=lambda: text_of(app.screen),
        )
        first = down_for(app)
        assert first is not None
        await until(
            lambda: (down_for(app) or 0) >= first + 2,
            timeout=5,
            what="the clock to count up by itself",
            detail=lambda: text_of(app.screen),
        )
