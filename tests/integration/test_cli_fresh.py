"""`swarm up --fresh` / `swarm demo --fresh`: start from a clean journal, the old one kept
aside (with its -wal: writes not yet checkpointed live there), never while an engine runs."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swarm_tui.testing import Sandbox, mock_agent, shell_agent, wait_until

pytestmark = pytest.mark.integration


def journal_files(box: Sandbox) -> list[str]:
    return sorted(p.name for p in box.home.glob("*.sqlite3*"))


def crash_with_a_queued_message(box: Sandbox, fleet: str, text: str) -> None:
    """An engine that died with a message queued for Ada, still in the -wal file."""
    code = textwrap.dedent(f"""
        import os
        from swarm_tui import paths
        from swarm_tui.fleet.store import Store
        store = Store(paths.db_path({fleet!r}))
        store.enqueue("human", "Ada", {text!r})
        os._exit(0)  # no close: nothing is checkpointed
    """)
    subprocess.run([sys.executable, "-c", code], env=box.env, check=True, timeout=30)


def rows(path, sql: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_up_fresh_keeps_the_old_journal_aside_and_replays_nothing(sandbox: Sandbox):
    layout = sandbox.layout("fr", mock_agent("Ada"), shell_agent("Shell"))
    first = sandbox.start_headless(layout)
    first.wait_ready()
    first.interrupt()  # the engine quits, the agents keep running
    assert first.wait() == 0, first.output()
    crash_with_a_queued_message(sandbox, "fr", "left over from yesterday")
    assert "fr.sqlite3-wal" in journal_files(sandbox)

    fresh = sandbox.start_headless(layout, "--fresh")
    line = fresh.wait_for_line("clean journal")
    fresh.wait_ready()
    kept = Path(line.rsplit(" ", 1)[1])
    assert line == f"swarm: fleet 'fr' starts from a clean journal; the old one is kept as {kept}"
    assert kept.parent == sandbox.home and kept.name.startswith("fr.20")
    assert stat.S_IMODE(sandbox.home.stat().st_mode) == 0o700
    # the old journal is whole (its -wal moved with it): the queued message is in it
    assert rows(kept, "SELECT text, status FROM messages") == [
        ("left over from yesterday", "queued")
    ]

    # a running agent keeps its identity: its token was carried into the clean journal
    tmux = sandbox.tmux("fr")
    tmux.send_keys("Shell", 'swarm send Ada "hello again"', literal=True)
    tmux.send_keys("Shell", "Enter")
    wait_until(
        lambda: sandbox.received("Ada"),
        15,
        "Ada to receive the new message",
        lambda: tmux.capture("Shell") + fresh.output(),
    )
    wait_until(
        lambda: [m["status"] for m in sandbox.journal("fr")] == ["delivered"],
        10,
        "the new message to be delivered",
        fresh.output,
    )
    assert sandbox.received("Ada") == ["[message from Shell] hello again"]
    assert [(m["sender"], m["text"]) for m in sandbox.journal("fr")] == [("Shell", "hello again")]

    # while that engine runs, --fresh is refused in one line and nothing is moved
    before = journal_files(sandbox)
    again = sandbox.swarm("up", str(layout), "--headless", "--fresh")
    assert again.returncode != 0 and "Traceback" not in again.stderr, again
    (refusal,) = again.stderr.strip().splitlines()
    assert refusal == (
        f"swarm: --fresh: fleet 'fr' is running (swarm pid {fresh.pid}) and its "
        "journal is in use: stop it first (quit its UI, or `swarm down` it), "
        "then start it with --fresh"
    )
    assert journal_files(sandbox) == before


def test_demo_fresh_is_refused_while_the_demo_runs(sandbox: Sandbox):
    demo = sandbox.start_headless(sandbox.layout("demo", mock_agent("Ada")))
    demo.wait_ready()
    result = sandbox.swarm("demo", "--headless", "--fresh")
    assert result.returncode != 0, result
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("swarm: --fresh: fleet 'demo' is running"), line
    assert journal_files(sandbox) == ["demo.sqlite3", "demo.sqlite3-shm", "demo.sqlite3-wal"]


def test_fresh_without_an_earlier_journal_just_starts(sandbox: Sandbox):
    proc = sandbox.start_headless(sandbox.layout("new", mock_agent("Ada")), "--fresh")
    proc.wait_ready()
    assert "clean journal" not in proc.stdout()
    assert journal_files(sandbox)[0] == "new.sqlite3"
