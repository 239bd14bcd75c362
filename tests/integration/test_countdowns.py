"""A view's reminder countdowns follow the engine's: they start, stop and restart.

Watchers extrapolate a countdown between updates, so the engine does not send one per
second. But a countdown that stops (the agent went to work: its idle reminder is off) or
starts again (a new idle stretch) is not a tick: the view must hear of it. Seen from
outside: `⏰ 0s` stayed on agents for minutes after their reminder had fired.
"""

from __future__ import annotations

import pytest

from swarm_tui.protocol.client import FleetClient
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration

PERIOD = 30.0  # the idle reminder's period: never fires during the test


async def test_the_view_sees_countdowns_stop_and_restart(sandbox, start_fleet) -> None:
    layout = sandbox.layout(
        "tick",
        mock_agent("Ada", "--work", "3"),
        reminders=[{"to": "all", "idle": "30s", "text": "go on"}],
    )
    run = await start_fleet(layout)
    await run.wait_states("idle")
    client = FleetClient(sandbox.socket_path("tick"))
    view = await client.connect()
    try:

        def countdown() -> float | None:
            return view.countdown("Ada")

        await async_wait_until(
            lambda: (countdown() or 0) > PERIOD - 5,
            5,
            "Ada's idle countdown in the view",
            lambda: repr(countdown()),
        )
        run.fleet.send(["Ada"], "work for a while")
        await run.wait_states("working", timeout=10)
        await async_wait_until(
            lambda: countdown() is None,
            3,
            "the countdown gone while Ada works",
            lambda: repr(countdown()),
        )
        await run.wait_states("idle", timeout=15)
        await async_wait_until(
            lambda: (countdown() or 0) > PERIOD - 3,
            3,
            "a fresh countdown for the new idle stretch",
            lambda: repr(countdown()),
        )
    finally:
        await client.close()
