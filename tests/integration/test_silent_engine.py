"""A view tells a quiet fleet from an engine that stopped answering.

The engine sends a heartbeat on every watch stream; a view that has heard one and then hears
nothing for SILENT_AFTER ends the stream and says why, and the UI's usual reconnection takes
over (it says the engine is not answering, and connects again when it does). Before, a
stopped engine (or a half-open link to a remote one) left the view showing the last tiles
as if they were live. The engine here is a real headless `swarm up`, frozen with the cgroup
freezer; the view is a real FleetClient.
"""

from __future__ import annotations

import pytest

from swarm_tui.protocol import client as protocol_client
from swarm_tui.protocol.client import FleetClient, NullViewListener
from swarm_tui.testing import async_holds, async_wait_until, mock_agent
from swarm_tui.testing.freezer import frozen

pytestmark = pytest.mark.integration

SILENT_AFTER = 11.0  # seconds: above the engine's 5 s heartbeat and its 1 s granularity


class Recorder(NullViewListener):
    def __init__(self) -> None:
        self.lost: list[str] = []

    def disconnected(self, reason: str) -> None:
        self.lost.append(reason)


async def test_a_frozen_engine_is_told_from_a_quiet_fleet(sandbox, monkeypatch) -> None:
    monkeypatch.setattr(protocol_client, "SILENT_AFTER", SILENT_AFTER)
    layout = sandbox.layout("quiet", mock_agent("Ada"))
    engine = sandbox.start_headless(layout)
    engine.wait_ready(30)
    heard = Recorder()
    client = FleetClient(sandbox.socket_path("quiet"), heard)
    await client.connect()
    try:
        # an idle fleet sends nothing but heartbeats: that is not silence
        await async_holds(
            lambda: heard.lost == [],
            SILENT_AFTER + 3,
            "the stream of a quiet fleet to stay up",
            lambda: repr(heard.lost),
        )
        with frozen(engine.pid, session=False):
            await async_wait_until(
                lambda: heard.lost, SILENT_AFTER + 10, "the view to notice the engine is silent"
            )
            assert heard.lost == [
                f"the engine has sent nothing for {SILENT_AFTER:g} s (is it running?)"
            ]
        view = await client.connect()  # what the UI's retry does once it answers again
        assert "Ada" in view.agents
    finally:
        await client.close()
