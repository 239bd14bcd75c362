"""The message log: who said what to whom, and the who-talks-to-whom counts."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from swarm_tui.fleet.store import Store
from swarm_tui.ui.keys import hint

STATUS_STYLE = {"delivered": "green", "queued": "yellow", "sending": "cyan",
                "failed": "bold red", "uncertain": "magenta"}


class MessagesScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,m,q", "dismiss_screen", "Close")]

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def compose(self) -> ComposeResult:
        with Horizontal(id="messages-box"):
            yield DataTable(id="messages-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="talk-graph")
        yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("time", "#", "from", "to", "status", "text")
        for m in self.store.messages(500):
            table.add_row(
                time.strftime("%H:%M:%S", time.localtime(m.created)), str(m.id), m.sender,
                m.recipient, Text(m.status, style=STATUS_STYLE.get(m.status, "")),
                Text(m.text.replace("\n", " ⏎ ")[:200]))
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)
        graph = Text("who talks to whom\n\n", style="bold")
        for sender, recipient, n in self.store.talk_graph():
            graph.append(f"{sender} → {recipient}  {n}\n")
        self.query_one("#talk-graph", Static).update(graph)
        table.focus()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
