"""The message journal survives `kill -9` of swarm: nothing queued is lost or sent twice."""

from __future__ import annotations

import sqlite3

import pytest

from swarm_tui.testing import holds, mock_agent, wait_until

pytestmark = pytest.mark.integration


def state_of(sandbox, name: str) -> str | None:
    import json

    result = sandbox.swarm("ls", "--json")
    if result.returncode != 0:
        return None
    return {a["name"]: a["state"] for a in json.loads(result.stdout)}[name]


def test_queued_message_is_delivered_once_after_kill_9(sandbox):
    layout = sandbox.layout("crash", mock_agent("Pat", "--permission-rate", "1", "--work", "1"))
    tmux = sandbox.tmux("crash")
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    wait_until(lambda: state_of(sandbox, "Pat") == "idle", 10, "Pat to be idle", owner.output)

    first = sandbox.swarm("send", "Pat", "first", "--wait", "10")
    assert first.stdout.strip().endswith("to Pat: delivered"), first.stdout + first.stderr
    wait_until(
        lambda: state_of(sandbox, "Pat") == "needs-permission",
        10,
        "Pat to ask for permission",
        lambda: tmux.capture("Pat"),
    )
    second = sandbox.swarm("send", "Pat", "second")
    assert second.stdout.strip().endswith("to Pat: queued"), second.stdout + second.stderr

    owner.kill9()
    stale = sandbox.swarm("ls")
    assert stale.returncode != 0 and "no swarm is running" in stale.stderr, stale.stderr
    assert "Do you want to" in tmux.capture("Pat"), "the agent did not survive swarm"
    assert [(r["text"], r["status"]) for r in sandbox.journal("crash")] == [
        ("first", "delivered"),
        ("second", "queued"),
    ]

    again = sandbox.start_headless(layout)
    assert "re-attached 1" in again.wait_ready()
    wait_until(
        lambda: state_of(sandbox, "Pat") == "needs-permission",
        10,
        "the restarted swarm to read the prompt",
        again.output,
    )
    holds(
        lambda: sandbox.received("Pat") == ["first"],
        1.0,
        "the resumed message to wait behind the prompt",
    )

    tmux.send_keys("Pat", "1")
    wait_until(
        lambda: sandbox.journal("crash")[1]["status"] == "delivered",
        10,
        "the resumed message to be delivered",
        again.output,
    )
    assert sandbox.received("Pat") == ["first", "second"]
    # and it stays that way: no second copy once the agent is free again
    wait_until(
        lambda: state_of(sandbox, "Pat") in ("needs-permission", "idle"), 10, "Pat to settle"
    )
    assert sandbox.received("Pat") == ["first", "second"]


def test_message_caught_mid_typing_is_never_retyped(sandbox):
    """A row left `sending` by a crash may already be in the agent: mark it, don't retype."""
    layout = sandbox.layout("midway", mock_agent("Ada"))
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    wait_until(lambda: state_of(sandbox, "Ada") == "idle", 10, "Ada to be idle", owner.output)
    assert "queued" in sandbox.swarm("send", "Ada", "--", "typed when swarm died").stdout
    wait_until(
        lambda: sandbox.journal("midway")[0]["status"] == "delivered", 10, "delivery", owner.output
    )
    owner.kill9()
    # the crash came between `sending` and `delivered`: rewrite the row as it would be
    db = sqlite3.connect(sandbox.db_path("midway"))
    try:
        db.execute("UPDATE messages SET status='sending'")
        db.commit()
    finally:
        db.close()

    again = sandbox.start_headless(layout)
    again.wait_ready()
    row = wait_until(
        lambda: (r := sandbox.journal("midway")[0])["status"] != "sending" and r,
        5,
        "the row to be resolved",
    )
    assert row["status"] == "uncertain", row
    wait_until(lambda: state_of(sandbox, "Ada") == "idle", 10, "Ada to be idle again")
    assert sandbox.received("Ada") == ["typed when swarm died"]
