"""Fresh start: handoff note, a new conversation, then focus and note re-injected."""

from __future__ import annotations

import pytest

from swarm_tui.config.skills import skill_text
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_fresh_start_hands_off_clears_and_reinjects(sandbox, start_fleet):
    layout = sandbox.layout("fresh", mock_agent("Fay", focus="the tokenizer"))
    run = await start_fleet(layout)
    await run.wait_states("idle")
    run.fleet.send(["Fay"], "rewrite the tokenizer")
    await async_wait_until(lambda: sandbox.received("Fay") == ["rewrite the tokenizer"], 10,
                           "the task to arrive", run.screens)

    listing = await sandbox.aswarm("fresh", "Fay")
    assert listing.returncode == 0, listing.stderr
    await async_wait_until(lambda: len(sandbox.received("Fay")) == 4, 30,
                           "handoff request, /clear and the re-injection", run.screens)
    task, handoff, clear, resume = sandbox.received("Fay")
    assert handoff == skill_text("handoff", {"path": ".swarm/handoff-Fay.md"})
    assert clear == "/clear"
    assert resume.startswith("Fresh start: you continue an earlier session's work.")
    assert "Your focus: the tokenizer" in resume
    # the note the agent wrote before the clear comes back to it after
    assert "Handoff from Fay" in resume and "rewrite the tokenizer" in resume
    screen = "\n".join(run.fleet.agents["Fay"].plain_screen())
    assert "rewrite the tokenizer" not in screen.split("(conversation cleared)")[-1] \
        or "Fresh start" in screen


async def test_fresh_start_of_unknown_agent_is_one_line(sandbox, start_fleet):
    layout = sandbox.layout("fresh2", mock_agent("Gil"))
    await start_fleet(layout)
    result = await sandbox.aswarm("fresh", "Nobody")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "swarm: no agent named 'Nobody' in fleet 'fresh2' (see `swarm ls`)"]
