"""The message log: who said what to whom, and the who-talks-to-whom counts."""

from __future__ import annotations

import time
from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.protocol.models import MessageView
from swarm_tui.ui.durations import since
from swarm_tui.ui.keys import hint

STATUS_STYLE = {
    "delivered": "green",
    "queued": "yellow",
    "sending": "cyan",
    "failed": "bold red",
    "uncertain": "magenta",
}
LIMIT = 500  # messages the log loads
WIDE = 110  # columns from which the who-talks-to-whom counts show beside the log


def talk_graph(messages: list[MessageView]) -> list[tuple[str, str, int]]:
    """(sender, recipient, count) for every pair in the messages, the busiest first."""
    counts = Counter((m.sender, m.recipient) for m in messages)
    return [(s, r, n) for (s, r), n in counts.most_common()]


def _when(t: float, now: float) -> str:
    if not t:
        return "—"
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(t))} ({since(t, now)} ago)"


def message_detail(m: MessageView, now: float) -> Text:
    """One message in full: who, when, what became of it and why, then its whole text."""
    out = Text()
    out.append(f"message #{m.id}\n", style="bold")
    out.append(f"from      {m.sender}\nto        {m.recipient}\n")
    out.append("status    ")
    out.append(m.status, style=STATUS_STYLE.get(m.status, ""))
    out.append(f"\nwritten   {_when(m.created, now)}\nupdated   {_when(m.updated, now)}\n")
    if m.detail:
        out.append("why       ")
        out.append(f"{m.detail}\n", style="red" if m.status in ("failed", "uncertain") else "")
    out.append("\n")
    out.append(m.text)
    return out


class MessageScreen(ModalScreen[None]):
    """One message, whole (the log shows 200 characters of it)."""

    BINDINGS = [Binding("escape,enter,q", "dismiss_screen", "Back to the log")]

    def __init__(self, message: MessageView) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="message-box"):
            with VerticalScroll():
                yield Static(message_detail(self.message, time.time()), id="message-text")
            yield Label(hint(self.BINDINGS), classes="box-help")

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)


class MessagesScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,m,q", "dismiss_screen", "Close")]
    # enter is the table's own (it selects the row): said in the hint and the help, not bound
    OPEN = Binding(
        "enter",
        "open",
        "Open",
        tooltip="the selected message in full: its whole text, delivery status and why",
    )

    def __init__(self, client: FleetClient) -> None:
        super().__init__()
        self.client = client
        self.loaded: list[MessageView] | None = None  # None: not yet answered

    def compose(self) -> ComposeResult:
        with Vertical(id="messages-box"):
            with Horizontal(id="messages-body"):
                yield DataTable(id="messages-table", cursor_type="row", zebra_stripes=True)
                yield Static(Text("loading…", style="grey50"), id="talk-graph")
            yield Label(hint([*self.BINDINGS, self.OPEN]), classes="box-help")

    def on_resize(self) -> None:
        # a narrow terminal gives the messages' text the room the counts would take
        self.query_one("#talk-graph").display = self.size.width >= WIDE

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
                time.strftime("%H:%M:%S", time.localtime(m.created)),
                str(m.id),
                m.sender,
                m.recipient,
                Text(m.status, style=STATUS_STYLE.get(m.status, "")),
                Text(m.text.replace("\n", " ⏎ ")[:200]),
                key=str(m.id),
            )
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)
        graph = Text("who talks to whom\n\n", style="bold")
        for sender, recipient, n in talk_graph(messages):
            graph.append(f"{sender} → {recipient}  {n}\n")
        self.query_one("#talk-graph", Static).update(graph)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._open(event.row_key.value)

    def _open(self, key: str | None) -> None:
        found = [m for m in self.loaded or [] if str(m.id) == key]
        if found:
            self.app.push_screen(MessageScreen(found[0]))

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
