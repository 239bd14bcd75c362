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

    def compose(self) -> ComposeResult:
        with Vertical(id="reminders-box"):
            yield Label("Reminders", id="prompt-target")
            yield DataTable(id="reminders-table", cursor_type="row")
            yield Input(id="reminder-edit", placeholder="new text, enter to save")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "to", "when", "next", "state", "text")
        self.query_one(Input).display = False
        self.reload()
        table.focus()

    def reload(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for r in self.fleet.store.reminders():
            when = {"every": f"every {float(str(r['period'])) / 60:g}m",
                    "idle": f"idle {float(str(r['period'])) / 60:g}m",
                    "at": f"at {r['at']}"}[str(r["kind"])]
            nxt = "-" if r["kind"] == "idle" else time.strftime(
                "%H:%M:%S", time.localtime(float(str(r["next_due"]))))
            what = f"skill {r['skill']}" if r["skill"] else str(r["text"])[:60]
            table.add_row(str(r["id"]), str(r["target"]), when, nxt,
                          "paused" if r["paused"] else "on", what, key=str(r["id"]))

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
        if self._selected() is not None:
            box = self.query_one(Input)
            box.display = True
            box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        rid = self._selected()
        if rid is not None and event.value.strip():
            self.fleet.reminders.edit(rid, event.value.strip())
        event.input.display = False
        event.input.value = ""
        self.query_one(DataTable).focus()
        self.reload()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
