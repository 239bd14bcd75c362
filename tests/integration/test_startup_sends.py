"""A message sent while swarm is starting (the socket answers before the journal is resumed)
is typed once, after the older messages the journal already held."""

from __future__ import annotations

import pytest

from swarm_tui import paths
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_a_send_during_start_up_is_typed_once_after_older_ones(sandbox):
    layout = sandbox.layout("boot", mock_agent("Ada"))
    store = Store(paths.db_path("boot"))
    for i in range(3):  # what an earlier run left queued
        store.enqueue("human", "Ada", f"old {i}")
    fleet = Fleet(load_layout(layout), store)
    try:
        fleet.send(["Ada"], "sent during start-up")  # an agent's `swarm send`, say
        await fleet.start()
        fleet.send(["Ada"], "sent after")
        want = ["old 0", "old 1", "old 2", "sent during start-up", "sent after"]
        await async_wait_until(lambda: [m.status for m in store.messages()] ==
                               ["delivered"] * 5, 60, "every message to be delivered")
        await async_wait_until(lambda: len(sandbox.received("Ada")) >= 5, 10, "the typing")
        assert sandbox.received("Ada") == want
    finally:
        await fleet.down()
        store.close()
