"""A journal that cannot be written (a full disk, a read-only file): a send is refused in one
line saying nothing was sent, the queue that hit it waits, says so, and delivers by itself
once the journal can be written again, without typing anything twice."""

from __future__ import annotations

import sqlite3

import pytest

from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.notices import Notices as Notes

pytestmark = pytest.mark.integration


async def test_a_journal_that_cannot_be_written_stalls_nothing_for_good(sandbox, start_fleet):
    run = await start_fleet(
        sandbox.layout("ro", mock_agent("Ada", "--work", "2", "--permission-rate", "1"))
    )
    notes = Notes()
    run.fleet.listener = notes
    await run.wait_states("idle", timeout=15)
    run.fleet.send(["Ada"], "first")
    await run.wait_states("needs-permission", timeout=15)
    (second,) = run.fleet.send(["Ada"], "second")  # queued behind the permission prompt
    run.store.db.execute("PRAGMA query_only=ON")  # from now on every write fails
    refused = await sandbox.aswarm("send", "Ada", "third")
    assert refused.returncode != 0
    (line,) = refused.stderr.strip().splitlines()
    assert "cannot be written" in line and "nothing was recorded or sent" in line
    sandbox.tmux("ro").send_keys("Ada", "y")  # the human answers: "second" may go now
    await async_wait_until(
        lambda: any("message queue failed" in n for n in notes.lines),
        30,
        "the failing queue to say so",
        run.screens,
    )
    assert "second" not in sandbox.received("Ada")
    run.store.db.execute("PRAGMA query_only=OFF")  # space is back

    def done() -> bool:
        if run.fleet.agents["Ada"].state.value == "needs-permission":
            sandbox.tmux("ro").send_keys("Ada", "y")
        return run.store.message(second.id).status == "delivered"

    await async_wait_until(done, 60, "the held message to be delivered", run.screens, interval=0.5)
    assert sandbox.received("Ada").count("second") == 1
    assert [m.text for m in run.store.messages()] == ["first", "second"]  # "third": nothing
    with pytest.raises(sqlite3.OperationalError):  # sanity: the pragma really blocked writes
        run.store.db.execute("PRAGMA query_only=ON")
        run.store.db.execute(
            "INSERT INTO focus_history(time, agent, label, by) VALUES (0, 'x', 'y', 'z')"
        )
