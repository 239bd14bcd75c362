"""The reminders panel (R) on the real app over a real tmux fleet: the cursor stays on its
reminder across actions, `e` edits the current text, durations read as people write them."""

from __future__ import annotations

from textual.widgets import DataTable, Input

from swarm_tui.config.work import ReminderSpec
from swarm_tui.fleet.engine import Fleet
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.durations import duration
from swarm_tui.ui.reminders import RemindersScreen
from tests.ui.conftest import until


def test_durations_read_as_people_write_them() -> None:
    assert [duration(s) for s in (0, 45, 59.9, 60, 90, 600, 3599, 3600, 5400, 7320, 86400,
                                  90000)] == \
        ["0s", "45s", "59s", "1m", "1m30s", "10m", "59m59s", "1h", "1h30m", "2h2m", "1d",
         "1d1h"]


def cursor_id(table: DataTable[object]) -> int:
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    assert key is not None
    return int(key)


def row_of(table: DataTable[object], rid: int) -> list[str]:
    return [str(cell) for cell in table.get_row(str(rid))]


async def test_reminders_panel_keeps_its_cursor_and_edits_the_current_text(live_fleet: Fleet
                                                                           ) -> None:
    rem, store = live_fleet.reminders, live_fleet.store
    specs = [{"to": "Gauss", "every": "90m", "text": "first"},
             {"to": "Hilbert", "idle": "45s", "text": "second: keep going"},
             {"to": "all", "every": "10m", "text": "third"}]
    ids = [rem.add(ReminderSpec.model_validate(spec)) for spec in specs]
    paused = {int(str(r["id"])): bool(r["paused"]) for r in store.reminders()}
    assert not any(paused.values())
    app = SwarmApp(live_fleet)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("R")
        await until(lambda: isinstance(app.screen, RemindersScreen), what="the panel")
        table = app.screen.query_one(DataTable)
        assert row_of(table, ids[0])[2] == "every 1h30m"
        assert row_of(table, ids[1])[2] == "idle 45s"
        assert row_of(table, ids[2])[2] == "every 10m"
        await pilot.press("down")
        assert cursor_id(table) == ids[1]
        await pilot.press("s")  # snooze the second one
        assert cursor_id(table) == ids[1], "the cursor went back to the first row"
        await pilot.press("p")  # then pause: the second one, not the first
        rows = {int(str(r["id"])): r for r in store.reminders()}
        assert rows[ids[1]]["paused"] and not rows[ids[0]]["paused"]
        assert cursor_id(table) == ids[1]
        assert row_of(table, ids[1])[4] == "paused"
        await pilot.press("e")
        field = app.screen.query_one(Input)
        await until(lambda: field.has_focus, what="the edit field")
        assert field.value == "second: keep going"
        await pilot.press(*" now", "enter")  # the cursor waits at the end of the text
        rows = {int(str(r["id"])): r for r in store.reminders()}
        assert rows[ids[1]]["text"] == "second: keep going now"
        assert cursor_id(table) == ids[1]
        await pilot.press("e", *" and junk", "escape")  # esc leaves the text as it was
        await until(lambda: table.has_focus, what="back in the table")
        assert isinstance(app.screen, RemindersScreen)
        rows = {int(str(r["id"])): r for r in store.reminders()}
        assert rows[ids[1]]["text"] == "second: keep going now"
        await pilot.press("down", "d")  # delete the third: the cursor stays on that row
        await until(lambda: len(store.reminders()) == 2, what="the third deleted")
        assert cursor_id(table) == ids[1]
