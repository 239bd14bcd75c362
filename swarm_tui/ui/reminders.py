"""The reminders panel: every timer, and keys to pause, snooze, fire, edit or delete one."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.protocol.models import ReminderView
from swarm_tui.ui.durations import duration
from swarm_tui.ui.keys import hint


class RemindersScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("p", "pause", "Pause/resume"),
        Binding("s", "snooze", "Snooze 10m"),
        Binding("f", "fire", "Fire now"),
        Binding("e", "edit", "Edit text", tooltip="enter saves"),
        Binding("d", "delete", "Delete"),
        Binding("escape,q", "dismiss_screen", "Close"),
    ]

    def __init__(self, client: FleetClient) -> None:
        super().__init__()
        self.client = client
        self._editing: int | None = None  # the reminder whose text the field edits
        self.drawn: list[ReminderView] = []  # the reminders the rows show
        self._ready = False  # the table has its columns (a change may come before)

    def compose(self) -> ComposeResult:
        with Vertical(id="reminders-box"):
            yield Label("Reminders", id="prompt-target")
            yield DataTable(id="reminders-table", cursor_type="row")
            yield Input(
                id="reminder-edit", placeholder="new text, enter to save", select_on_focus=False
            )
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "to", "when", "next", "state", "text")
        self._ready = True
        self.query_one(Input).display = False
        self.reload()
        table.focus()

    def reminders(self) -> list[ReminderView]:
        view = self.client.view
        return list(view.work.reminders) if view is not None else []

    def reload(self) -> None:
        """Rebuild the rows from the fleet view (again whenever the engine says the
        reminders changed); the cursor stays on its reminder (or, when that one is gone, on
        the row where it was)."""
        if not self._ready:
            return  # on_mount draws them
        table = self.query_one(DataTable)
        was, row = self._selected(), table.cursor_row
        table.clear()
        self.drawn = self.reminders()
        for r in self.drawn:
            period = duration(r.period)
            when = {"every": f"every {period}", "idle": f"idle {period}", "at": f"at {r.at}"}.get(
                r.kind, r.kind
            )
            nxt = "-" if r.kind == "idle" else time.strftime("%H:%M:%S", time.localtime(r.next_due))
            what = f"skill {r.skill}" if r.skill else r.text[:60]
            table.add_row(
                str(r.id), r.target, when, nxt, "paused" if r.paused else "on", what, key=str(r.id)
            )
        if was is not None and str(was) in table.rows:
            row = table.get_row_index(str(was))
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)

    def _selected(self) -> int | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return int(key) if key else None

    def _row(self, rid: int | None) -> ReminderView | None:
        return next((r for r in self.reminders() if r.id == rid), None)

    def _do(self, action: str) -> None:
        row = self._row(self._selected())
        if row is None:
            return
        if action == "pause":
            action = "resume" if row.paused else "pause"
        elif action == "delete":
            action = "rm"
        # on the app: a request under way is not cancelled when the panel closes
        self.app.run_worker(self._request(action, row.id), group="reminders")

    async def _request(self, action: str, rid: int, text: str = "") -> None:
        """One reminder request to the engine; the rows follow when the engine says the
        reminders changed (and once more now)."""
        try:
            reply = await self.client.remind(action, rid, text=text, minutes=10)
        except (Refused, Unreachable) as exc:
            self.app.notify(str(exc), severity="error")
            return
        if action == "fire":
            fired = reply.get("fired") or []
            names = [str(f[-1]) if isinstance(f, list | tuple) else str(f) for f in fired]
            self.app.notify(f"queued for {', '.join(names) or 'nobody'}")
        if self.is_attached:
            self.reload()

    def action_pause(self) -> None:
        self._do("pause")

    def action_snooze(self) -> None:
        self._do("snooze")

    def action_fire(self) -> None:
        self._do("fire")

    def action_delete(self) -> None:
        self._do("delete")

    def action_edit(self) -> None:
        row = self._row(self._selected())
        if row is None:
            return
        self._editing = row.id
        box = self.query_one(Input)
        box.value = row.text
        box.placeholder = (
            f"text instead of skill {row.skill}, enter to save"
            if row.skill
            else "new text, enter to save"
        )
        box.display = True
        box.focus()
        box.cursor_position = len(box.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        rid, text = self._editing, event.value.strip()
        if rid is not None and text:
            self.app.run_worker(self._request("edit", rid, text), group="reminders")
        self._end_edit()

    def _end_edit(self) -> None:
        self._editing = None
        box = self.query_one(Input)
        box.display = False
        box.value = ""
        self.query_one(DataTable).focus()
        self.reload()

    def action_dismiss_screen(self) -> None:
        if self._editing is not None:
            self._end_edit()  # esc while editing leaves the text as it was
            return
        self.dismiss(None)
