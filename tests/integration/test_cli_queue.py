"""`swarm task` and `swarm ls` for a fleet left alone: how long a queue has waited, and
tasks that are reviewed only when their agent says done."""

from __future__ import annotations

import json

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_ls_shows_how_long_the_oldest_queued_message_has_waited(sandbox, start_fleet):
    run = await start_fleet(
        sandbox.layout("lsq", mock_agent("Wes", "--work", "5", "--permission-rate", "1"))
    )
    await run.wait_states("idle", timeout=15)
    run.fleet.send(["Wes"], "start")
    await run.wait_states("needs-permission", timeout=15)  # it waits for a human now
    run.fleet.send(["Wes"], "one")
    run.fleet.send(["Wes"], "two")
    await async_wait_until(lambda: run.fleet.agents["Wes"].pending == 2, 5, "two queued")

    async def ls() -> dict:
        result = await sandbox.aswarm("ls", "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)[0]

    row = await ls()
    assert row["queued"] == 2 and row["oldest_queued"] is not None
    text = (await sandbox.aswarm("ls")).stdout
    assert "2 (" in text and "s)" in text  # e.g. "2 (1s)"
    wes = run.fleet.agents["Wes"]

    def drained() -> bool:
        if wes.state.value == "needs-permission":  # every turn asks: the human says yes
            sandbox.tmux("lsq").send_keys("Wes", "y")
        return wes.pending == 0

    await async_wait_until(drained, 60, "the queue to drain", run.screens, interval=1.0)
    assert (await ls())["oldest_queued"] is None


async def test_a_task_added_without_review_on_idle(sandbox, start_fleet):
    run = await start_fleet(sandbox.layout("noidle", mock_agent("Wes")))
    await run.wait_states("idle", timeout=15)
    result = await sandbox.aswarm(
        "task", "Wes", "--spec", "Port the parser", "--no-review-on-idle", "--max-rounds", "2"
    )
    assert result.returncode == 0, result.stderr
    (task,) = run.store.tasks("Wes")
    assert task.review_on_idle is False and task.max_rounds == 2
    bad = await sandbox.aswarm("task", "Wes", "--spec", "x", "--max-rounds", "0")
    assert bad.returncode != 0 and "--max-rounds: '0': give a number" in bad.stderr
