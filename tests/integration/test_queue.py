"""A message for an agent that cannot take input yet waits in its queue, then arrives once.

The mock agent draws a real permission dialog (`--permission-rate 1`: every turn asks) and a
real busy spinner (`--work N`); swarm must read those screens and hold the message back.
The mock's seed is its index + 1, so agent 0's first turn lasts 0.634 × `--work` seconds.
"""

from __future__ import annotations

import json
import time

import pytest

from swarm_tui.testing import async_holds, async_wait_until, mock_agent

pytestmark = pytest.mark.integration


def status(run, message) -> str:
    return run.store.message(message.id).status


async def test_message_waits_for_permission_prompt_then_is_delivered(sandbox, start_fleet):
    layout = sandbox.layout("perm", mock_agent("Pat", "--permission-rate", "1", "--work", "1"))
    run = await start_fleet(layout)
    await run.wait_states("idle")
    (first,) = run.fleet.send(["Pat"], "run the tests")
    await run.wait_states("needs-permission")
    assert status(run, first) == "delivered"

    (second,) = run.fleet.send(["Pat"], "and then fix what fails")
    await async_holds(
        lambda: status(run, second) == "queued" and sandbox.received("Pat") == ["run the tests"],
        1.5,
        "the second message to stay queued behind the permission prompt",
        run.screens,
    )

    listing = await sandbox.aswarm("ls", "--json")
    assert listing.returncode == 0, listing.stderr
    (pat,) = json.loads(listing.stdout)
    assert (pat["state"], pat["queued"]) == ("needs-permission", 1), pat
    assert pat["question"].startswith("run `"), pat

    answered = time.time()
    sandbox.tmux("perm").send_keys("Pat", "1")  # "1. Yes", as a human would answer
    await async_wait_until(
        lambda: status(run, second) == "delivered",
        10,
        "the queued message to be delivered",
        run.screens,
    )
    log = sandbox.received_at("Pat")
    assert [text for _, text in log] == ["run the tests", "and then fix what fails"]
    assert log[1][0] > answered, "typed before the prompt was answered"


async def test_message_sent_while_busy_waits_for_idle(sandbox, start_fleet):
    layout = sandbox.layout("busy", mock_agent("Bea", "--work", "3"))  # first turn ≈ 1.9 s
    run = await start_fleet(layout)
    await run.wait_states("idle")
    run.fleet.send(["Bea"], "long job")
    await run.wait_states("working")

    (second,) = run.fleet.send(["Bea"], "next job")
    bea = run.fleet.agents["Bea"]

    def queued_while_busy() -> bool:
        if bea.state.value == "working":
            assert status(run, second) == "queued", "typed into a busy agent"
            assert sandbox.received("Bea") == ["long job"]
            return False
        return True

    await async_wait_until(queued_while_busy, 10, "Bea to finish the long job", run.screens)
    await async_wait_until(
        lambda: status(run, second) == "delivered",
        10,
        "the queued message to be delivered",
        run.screens,
    )
    assert sandbox.received("Bea") == ["long job", "next job"]
    assert run.store.message(second.id).detail == ""


async def test_back_to_back_messages_wait_for_the_first_turn(sandbox, start_fleet):
    """Regression: the shown state lags the screen by SETTLE, so the second message used to
    be typed into the box of an agent already busy with the first (its Enter was lost)."""
    layout = sandbox.layout("b2b", mock_agent("Cal", "--work", "5"))  # first turn ≈ 3.2 s
    run = await start_fleet(layout)
    await run.wait_states("idle")
    first, second = (
        run.fleet.send(["Cal"], "first job")[0],
        run.fleet.send(["Cal"], "second job")[0],
    )
    await async_wait_until(
        lambda: status(run, first) == "delivered",
        10,
        "the first message to be delivered",
        run.screens,
    )
    await async_holds(
        lambda: status(run, second) == "queued",
        1.5,
        "the second message to wait while Cal works on the first",
        run.screens,
    )
    await async_wait_until(
        lambda: status(run, second) not in ("queued", "sending"),
        15,
        "the second message to be delivered",
        run.screens,
    )
    assert status(run, second) == "delivered"
    assert sandbox.received("Cal") == ["first job", "second job"]
    assert run.store.message(second.id).detail == "", "needed a rescue Enter"
