"""Agent states follow the screen with no help from later output."""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_agent_is_seen_idle_after_its_turn_with_no_further_output(sandbox, start_fleet):
    """Regression (5e3981e): the refresh loop gathered deadlines before capturing, so a capture
    that started the idle hold set no timer and a silent agent stayed `working` for good."""
    layout = sandbox.layout("settle", mock_agent("Ada"))
    run = await start_fleet(layout, visible=False)  # off screen, as under `--headless`
    await run.wait_states("idle")
    (message,) = run.fleet.send(["Ada"], "a short job")
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered", 5, "delivery", run.screens
    )
    # the mock works ≈0.3 s, draws its idle box once and then stays silent; idle needs
    # idle_quiet (0.8 s) after a capture that may come up to HIDDEN_INTERVAL (1 s) late
    await run.wait_states("idle", timeout=6)
    assert run.fleet.agents["Ada"].tracker.ready
