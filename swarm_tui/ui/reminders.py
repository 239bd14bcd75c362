"""The reminders panel: every timer, and keys to pause, snooze, fire, edit or delete one."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.engine import Fleet
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

    def __init__(self, fleet: Fleet) -> None:
        super().__init__()
        self.fleet = fleet
        self._editing: int | None = None  # the reminder whose text the field edits

    def compose(self) -> ComposeResult:
        with Vertical(id="reminders-box"):
            yield Label("Reminders", id="prompt-target")
            yield DataTable(id="reminders-table", cursor_type="row")
            yield Input(id="reminder-edit", placeholder="new text, enter to save",
                        select_on_focus=False)
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "to", "when", "next", "state", "text")
        self.query_one(Input).display = False
        self.reload()
        table.focus()

    def reload(self) -> None:
        """Rebuild the rows from the store; the cursor stays on its reminder (or, when that
        one is gone, on the row where it was)."""
        table = self.query_one(DataTable)
        was, row = self._selected(), table.cursor_row
        table.clear()
        for r in self.fleet.store.reminders():
            period = duration(float(str(r["period"])))
            when = {"every": f"every {period}", "idle": f"idle {period}",
                    "at": f"at {r['at']}"}[str(r["kind"])]
            nxt = "-" if r["kind"] == "idle" else time.strftime(
                "%H:%M:%S", time.localtime(float(str(r["next_due"]))))
            what = f"skill {r['skill']}" if r["skill"] else str(r["text"])[:60]
            table.add_row(str(r["id"]), str(r["target"]), when, nxt,
                          "paused" if r["paused"] else "on", what, key=str(r["id"]))
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

    def _do(self, action: str) -> None:
        rid = self._selected()
        if rid is None:
            return
        rem = self.fleet.reminders
        try:
            if action == "pause":
                row = next(r for r in self.fleet.store.reminders() if r["id"] == rid)
                rem.pause(rid, not row["paused"])
            elif action == "snooze":
                rem.snooze(rid, 600)
            elif action == "fire":
                fired = rem.fire_now(rid)
                self.notify(f"queued for {', '.join(a for _, a in fired) or 'nobody'}")
            elif action == "delete":
                rem.remove(rid)
        except SwarmError as exc:
            self.notify(str(exc), severity="error")
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
        rid = self._selected()
        row = next((r for r in self.fleet.store.reminders() if r["id"] == rid), None)
        if rid is None or row is None:
            return
        self._editing = rid
        box = self.query_one(Input)
        box.value = str(row["text"])
        box.placeholder = f"text instead of skill {row['skill']}, enter to save" \
            if row["skill"] else "new text, enter to save"
        box.display = True
        box.focus()
        box.cursor_position = len(box.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        rid, text = self._editing, event.value.strip()
        if rid is not None and text:
            try:
                self.fleet.reminders.edit(rid, text)
            except SwarmError as exc:
                self.notify(str(exc), severity="error")
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
