"""A CLI that does not run while its message is typed: the verdict waits for the CLI.

On a loaded machine (a 128-agent fleet on the same cores, a node swapping) an agent's CLI can
go seconds without being scheduled. Its terminal keeps what swarm types; when the CLI runs
again it reads the paste and every Enter in one go, and like real TUIs takes Enters that
arrive with fast input as newlines. The message is then in its box, not submitted. Here the
mock agent is frozen (the cgroup freezer) before a message is sent and thawed after swarm's
usual verification would have given up. The message must end `delivered` and reach the agent
exactly once: not `delivered` at once because the frozen screen shows an empty box (it then
sat unsubmitted in the box, and the next message cleared it away), not `failed` while the
CLI could not run. A CLI that stays frozen past the wait gets `uncertain`, never a guess.
"""

from __future__ import annotations

import time

import pytest

from swarm_tui.fleet import injection
from swarm_tui.testing import async_holds, async_wait_until, mock_agent
from swarm_tui.testing.freezer import frozen

pytestmark = pytest.mark.integration

FROZEN = 8.0  # seconds: past the first verification and the rescue Enter's (2 s + 4 s)


async def test_a_message_typed_while_the_cli_is_frozen_is_delivered_once(sandbox, start_fleet):
    layout = sandbox.layout("frozen", mock_agent("Fay"))
    run = await start_fleet(layout)
    await run.wait_states("idle", timeout=30)
    pid = sandbox.tmux("frozen").agent_windows()["Fay"].pid
    store = run.store

    def submitted() -> list[str]:
        return [text.rstrip("\n") for text in sandbox.received("Fay")]

    with frozen(pid):
        (message,) = run.fleet.send(["Fay"], "checked while frozen")
        frozen_at = time.monotonic()
        await async_wait_until(
            lambda: store.message(message.id).status == "sending",
            10,
            "the message to be typed",
            run.screens,
        )
        # while the CLI cannot run, nothing may call the message failed
        await async_holds(
            lambda: store.message(message.id).status == "sending",
            FROZEN - (time.monotonic() - frozen_at),
            "the message to stay `sending` while its CLI is frozen",
            lambda: f"{store.message(message.id)}\n{run.screens()}",
        )
        assert store.message(message.id).detail == (
            "typed; the CLI has not redrawn since (is it running?)"
        )

    await async_wait_until(
        lambda: store.message(message.id).status != "sending",
        30,
        "a verdict once the CLI runs again",
        run.screens,
    )
    final = store.message(message.id)
    assert final.status == "delivered", (final, run.screens())
    # the CLI took the first Enter as a newline, as real ones do: the text ends with it
    await async_wait_until(
        lambda: submitted() == ["checked while frozen"],
        10,
        "the agent to have the message once",
        run.screens,
    )

    (after,) = run.fleet.send(["Fay"], "and the next one")
    await async_wait_until(
        lambda: store.message(after.id).status not in ("queued", "sending"),
        30,
        "the next message's verdict",
        run.screens,
    )
    assert store.message(after.id).status == "delivered"
    assert submitted() == ["checked while frozen", "and the next one"]


async def test_a_cli_frozen_past_the_wait_makes_the_message_uncertain(
    sandbox, start_fleet, monkeypatch
):
    monkeypatch.setattr(injection, "REACT_WAIT", 2.0)
    run = await start_fleet(sandbox.layout("frozen", mock_agent("Gus")))
    await run.wait_states("idle", timeout=30)
    pid = sandbox.tmux("frozen").agent_windows()["Gus"].pid
    store = run.store
    with frozen(pid):
        (message,) = run.fleet.send(["Gus"], "typed into a CLI that never ran")
        await async_wait_until(
            lambda: store.message(message.id).status not in ("queued", "sending"),
            10,
            "a verdict",
            run.screens,
        )
        final = store.message(message.id)
        assert (final.status, final.detail) == (
            "uncertain",
            "the screen did not change in 2 s after the message was typed (is the CLI running?)",
        ), final
    # thawed, it reads the paste and the Enter together: the text waits in its box, and the
    # verdict said it might
    gus = run.fleet.agents["Gus"]
    await async_wait_until(
        lambda: (gus.tracker.reading.draft or "").strip() == "typed into a CLI that never ran",
        10,
        "the text in Gus's box",
        run.screens,
    )
    assert sandbox.received("Gus") == []
