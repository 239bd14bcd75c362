"""`m`, then enter on a message: the whole message — sender, recipient, times, its delivery
status and why it failed — not the 200 characters the log has room for."""

from __future__ import annotations

import time
from pathlib import Path

from swarm_tui.protocol.models import MessageView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.messages import MessageScreen, MessagesScreen
from tests.ui.conftest import FakeClient, still_fleet, text_of, until

LONG = "Run the whole suite, then " + "fix what fails; " * 40 + "and report THE-END-MARKER."


class Logged(FakeClient):
    async def messages(self, limit: int = 200) -> list[MessageView]:
        now = time.time()
        return [
            MessageView(
                id=7,
                created=now - 600,
                sender="human",
                recipient="Gauss",
                text="hi",
                status="delivered",
                updated=now - 590,
            ),
            MessageView(
                id=8,
                created=now - 120,
                sender="Hilbert",
                recipient="Noether",
                text=LONG,
                status="failed",
                updated=now - 100,
                detail="text still in the input box after one rescue Enter",
            ),
        ]


async def test_enter_opens_a_message_in_full(tmp_path: Path) -> None:
    app = SwarmApp(Logged(still_fleet(tmp_path, count=4)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await until(
            lambda: isinstance(app.screen, MessagesScreen) and app.screen.loaded,
            what="the log loaded",
        )
        await pilot.press("enter")  # the cursor starts on the newest
        await until(lambda: isinstance(app.screen, MessageScreen), what="the message opened")
        shown = text_of(app.screen)
        assert "message #8" in shown and "Hilbert" in shown and "Noether" in shown
        assert "failed" in shown and "rescue Enter" in shown and "2m ago" in shown
        body = str(app.screen.query_one("#message-text").render())
        assert "THE-END-MARKER" in body  # the whole text, not the log's 200 characters
        await pilot.press("escape")
        await until(lambda: isinstance(app.screen, MessagesScreen), what="back in the log")
        await pilot.press("up", "enter")
        await until(
            lambda: isinstance(app.screen, MessageScreen) and "message #7" in text_of(app.screen),
            what="the older message",
        )
