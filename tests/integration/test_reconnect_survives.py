"""A host's reconnection keeps trying whatever goes wrong on the way back.

It retried only the errors it knew (swarm's own, the OS's); anything else ended the task
that brings the host back, and the host stayed down all night with nothing said. Here the
local control client is killed (the link drops) and the first look at the session on the
way back raises an error nobody planned for: the link must still come back, the error be
shown as the link's state meanwhile, and messages flow again.
"""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_reconnect_survives_an_unexpected_error(sandbox, start_fleet, monkeypatch):
    run = await start_fleet(sandbox.layout("back", mock_agent("Ada")))
    await run.wait_states("idle", timeout=30)
    link = run.fleet.links["local"]
    host = link.host
    exists = host.session_exists
    details: list[str] = []
    real_state = run.fleet.link_state

    def recorded(link_, up, detail):
        details.append(detail)
        return real_state(link_, up, detail)

    monkeypatch.setattr(run.fleet, "link_state", recorded)
    raised: list[bool] = []

    async def flaky() -> bool:
        if not raised:
            raised.append(True)
            raise LookupError("nobody planned for this")
        return await exists()

    monkeypatch.setattr(host, "session_exists", flaky)
    host._proc.kill()  # noqa: SLF001 - the control client dies: the link drops
    await async_wait_until(lambda: raised, 10, "the reconnection to hit the error")
    await async_wait_until(
        lambda: link.connected, 15, "the link back after the error", lambda: repr(details)
    )
    assert "LookupError('nobody planned for this')" in details, details
    await run.wait_states("idle", timeout=15)
    (message,) = run.fleet.send(["Ada"], "still here")
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered",
        15,
        "a message after the reconnection",
        run.screens,
    )
