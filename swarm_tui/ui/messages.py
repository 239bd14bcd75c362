"""The message log: who said what to whom, and the who-talks-to-whom counts."""

from __future__ import annotations

import time
from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.protocol.models import MessageView
from swarm_tui.ui.keys import hint

STATUS_STYLE = {"delivered": "green", "queued": "yellow", "sending": "cyan",
                "failed": "bold red", "uncertain": "magenta"}
LIMIT = 500  # messages the log loads


def talk_graph(messages: list[MessageView]) -> list[tuple[str, str, int]]:
    """(sender, recipient, count) for every pair in the messages, the busiest first."""
    counts = Counter((m.sender, m.recipient) for m in messages)
    return [(s, r, n) for (s, r), n in counts.most_common()]


class MessagesScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,m,q", "dismiss_screen", "Close")]

    def __init__(self, client: FleetClient) -> None:
        super().__init__()
        self.client = client
        self.loaded: list[MessageView] | None = None  # None: not yet answered

    def compose(self) -> ComposeResult:
        with Horizontal(id="messages-box"):
            yield DataTable(id="messages-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("loading…", style="grey50"), id="talk-graph")
        yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("time", "#", "from", "to", "status", "text")
        table.focus()
        self.run_worker(self._load(), group="messages", exclusive=True)

    async def _load(self) -> None:
        try:
            messages = await self.client.messages(LIMIT)
        except (Refused, Unreachable) as exc:
            self.query_one("#talk-graph", Static).update(Text(str(exc), style="red"))
            self.notify(f"messages: {exc}", severity="error")
            return
        self.show(messages)

    def show(self, messages: list[MessageView]) -> None:
        self.loaded = messages
        table = self.query_one(DataTable)
        for m in messages:
            table.add_row(
                time.strftime("%H:%M:%S", time.localtime(m.created)), str(m.id), m.sender,
                m.recipient, Text(m.status, style=STATUS_STYLE.get(m.status, "")),
                Text(m.text.replace("\n", " ⏎ ")[:200]))
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)
        graph = Text("who talks to whom\n\n", style="bold")
        for sender, recipient, n in talk_graph(messages):
            graph.append(f"{sender} → {recipient}  {n}\n")
        self.query_one("#talk-graph", Static).update(graph)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
