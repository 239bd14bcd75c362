"""The reminders panel (R) on the real app attached to a real engine (a tmux fleet): the
cursor stays on its reminder across actions, `e` edits the current text, durations read as
people write them."""

from __future__ import annotations

from textual.widgets import DataTable, Input

from swarm_tui.config.work import ReminderSpec
from swarm_tui.fleet.store import Reminder, Store
from swarm_tui.protocol.models import ReminderView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.durations import duration
from swarm_tui.ui.reminders import RemindersScreen
from tests.ui.conftest import Live, until


def test_durations_read_as_people_write_them() -> None:
    assert [
        duration(s) for s in (0, 45, 59.9, 60, 90, 600, 3599, 3600, 5400, 7320, 86400, 90000)
    ] == ["0s", "45s", "59s", "1m", "1m30s", "10m", "59m59s", "1h", "1h30m", "2h2m", "1d", "1d1h"]


def cursor_id(table: DataTable[object]) -> int:
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    assert key is not None
    return int(key)


def row_of(table: DataTable[object], rid: int) -> list[str]:
    return [str(cell) for cell in table.get_row(str(rid))]


def shown_row(screen: RemindersScreen, rid: int) -> ReminderView | None:
    """The reminder as the panel last drew it."""
    return next((r for r in screen.drawn if r.id == rid), None)


async def test_reminders_panel_keeps_its_cursor_and_edits_the_current_text(live: Live) -> None:
    rem, store = live.fleet.reminders, live.store
    specs = [
        {"to": "Gauss", "every": "90m", "text": "first"},
        {"to": "Hilbert", "idle": "45s", "text": "second: keep going"},
        {"to": "all", "every": "10m", "text": "third"},
    ]
    ids = [rem.add(ReminderSpec.model_validate(spec)) for spec in specs]
    paused = {r.id: r.paused for r in store.reminders()}
    assert not any(paused.values())
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(lambda: len(live.view.work.reminders) == 3, what="the engine to report them")
        await pilot.press("R")
        await until(lambda: isinstance(app.screen, RemindersScreen), what="the panel")
        screen = app.screen
        assert isinstance(screen, RemindersScreen)
        table = screen.query_one(DataTable)
        assert row_of(table, ids[0])[2] == "every 1h30m"
        assert row_of(table, ids[1])[2] == "idle 45s"
        assert row_of(table, ids[2])[2] == "every 10m"
        await pilot.press("down")
        assert cursor_id(table) == ids[1]
        due = store_row(store, ids[1]).next_due
        await pilot.press("s")  # snooze the second one: the rows are drawn again
        await until(
            lambda: getattr(shown_row(screen, ids[1]), "next_due", due) != due,
            what="the snooze in the panel",
        )
        assert cursor_id(table) == ids[1], "the cursor went back to the first row"
        await pilot.press("p")  # then pause: the second one, not the first
        await until(lambda: row_of(table, ids[1])[4] == "paused", what="the pause shown")
        assert store_row(store, ids[1]).paused and not store_row(store, ids[0]).paused
        assert cursor_id(table) == ids[1]
        await pilot.press("e")
        field = screen.query_one(Input)
        await until(lambda: field.has_focus, what="the edit field")
        assert field.value == "second: keep going"
        await pilot.press(*" now", "enter")  # the cursor waits at the end of the text
        await until(
            lambda: getattr(shown_row(screen, ids[1]), "text", "") == "second: keep going now",
            what="the new text in the panel",
        )
        assert store_row(store, ids[1]).text == "second: keep going now"
        assert cursor_id(table) == ids[1]
        await pilot.press("e", *" and junk", "escape")  # esc leaves the text as it was
        await until(lambda: table.has_focus, what="back in the table")
        assert isinstance(app.screen, RemindersScreen)
        assert store_row(store, ids[1]).text == "second: keep going now"
        await pilot.press("down", "d")  # delete the third: the cursor stays on that row
        await until(lambda: len(store.reminders()) == 2, what="the third deleted")
        await until(lambda: len(screen.drawn) == 2, what="the third gone from the panel")
        assert cursor_id(table) == ids[1]


def store_row(store: Store, rid: int) -> Reminder:
    row = store.reminder(rid)
    assert row is not None
    return row
