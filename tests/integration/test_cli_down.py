"""`swarm down` settles the journal: what was still queued is cancelled (and recorded), so
the next `swarm up` never types an old message into its new agents — with or without an
engine running when `down` is called."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from swarm_tui.testing import Sandbox, mock_agent, wait_until

pytestmark = pytest.mark.integration


def statuses(box: Sandbox, fleet: str) -> list[tuple[str, str]]:
    return [(m["text"], m["status"]) for m in box.journal(fleet)]


def test_down_cancels_what_is_queued_and_the_next_run_does_not_type_it(sandbox: Sandbox):
    layout = sandbox.layout("dn", mock_agent("Slow", "--work", "8"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    sent = sandbox.swarm("send", "Slow", "first", "--wait", "10")
    assert sent.returncode == 0, sent.stderr
    queued = sandbox.swarm("send", "Slow", "second")  # Slow is busy with "first" for seconds
    assert queued.returncode == 0 and queued.stdout.strip() == "#2 to Slow: queued", queued

    down = sandbox.swarm("down", str(layout))
    assert (down.returncode, down.stderr) == (0, ""), down
    assert down.stdout.splitlines() == [
        "swarm: fleet 'dn' on local: stopped",
        "swarm: fleet 'dn': 1 queued message cancelled",
    ]
    assert owner.wait(10) == 0, owner.output()
    assert list((sandbox.home / f"tmux-{os.getuid()}").iterdir()) == [], (
        "the tmux server's socket file was left behind"
    )
    (row,) = [m for m in sandbox.journal("dn") if m["text"] == "second"]
    assert row["status"] == "cancelled" and "swarm down" in row["detail"]

    again = sandbox.start_headless(layout)
    again.wait_ready()
    third = sandbox.swarm("send", "Slow", "third", "--wait", "15")
    assert third.returncode == 0, (third.stdout, third.stderr, again.output())
    assert sandbox.received("Slow") == ["first", "third"]  # the log spans both runs
    assert statuses(sandbox, "dn") == [
        ("first", "delivered"),
        ("second", "cancelled"),
        ("third", "delivered"),
    ]


def test_down_without_an_engine_settles_the_journal_too(sandbox: Sandbox):
    layout = sandbox.layout("dn2", mock_agent("Ada"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    owner.kill9()  # the engine is gone; its agents and journal stay
    code = textwrap.dedent("""
        from swarm_tui import paths
        from swarm_tui.fleet.store import Store
        Store(paths.db_path("dn2")).enqueue("human", "Ada", "never typed")
    """)
    subprocess.run([sys.executable, "-c", code], env=sandbox.env, check=True, timeout=30)
    down = sandbox.swarm("down", str(layout))
    assert down.returncode == 0, down
    assert down.stdout.splitlines()[-1] == "swarm: fleet 'dn2': 1 queued message cancelled"
    wait_until(
        lambda: statuses(sandbox, "dn2") == [("never typed", "cancelled")],
        5,
        "the message to be cancelled",
    )
    quiet = sandbox.swarm("down", str(layout))  # nothing left to settle: nothing said
    assert quiet.stdout.splitlines() == ["swarm: fleet 'dn2' on local: was not running"]


def test_an_agent_cannot_stop_the_fleet(sandbox: Sandbox):
    """`swarm down` from an agent's pane: the engine refuses, and the CLI stops nothing."""
    import sqlite3

    layout = sandbox.layout("nodown", mock_agent("Ada"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    with sqlite3.connect(sandbox.db_path("nodown")) as db:
        (token,) = db.execute("SELECT token FROM agents WHERE name='Ada'").fetchone()
    down = sandbox.swarm("down", str(layout), env={"SWARM_TOKEN": token})
    assert down.returncode != 0
    assert down.stderr.strip().startswith("swarm: Ada may not stop the fleet")
    assert sandbox.tmux("nodown").has_session("nodown") or sandbox.tmux("nodown").alive()
    ls = sandbox.swarm("ls")
    assert ls.returncode == 0, ls.stderr  # the engine still runs
    owner.interrupt()


def test_down_without_a_layout_stops_the_one_fleet_running(sandbox: Sandbox):
    """`swarm stop` and `swarm ui` find the one running fleet by themselves; `swarm down`
    said `the following arguments are required: layout` (seen in a new-user trial)."""
    none = sandbox.swarm("down")
    assert none.returncode != 0 and "no engine is running here" in none.stderr, none
    assert "swarm down LAYOUT" in none.stderr and len(none.stderr.strip().splitlines()) == 1
    layout = sandbox.layout("dn3", mock_agent("Ada"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    down = sandbox.swarm("down")
    assert (down.returncode, down.stderr) == (0, ""), down
    assert down.stdout.splitlines()[0] == "swarm: fleet 'dn3' on local: stopped"
    assert owner.wait(10) == 0, owner.output()
