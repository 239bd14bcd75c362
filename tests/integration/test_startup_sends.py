"""A message sent while swarm is starting (the socket answers before the journal is resumed)
is typed once, after the older messages the journal already held."""

from __future__ import annotations

import pytest

from swarm_tui import paths
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.notices import Notices

pytestmark = pytest.mark.integration


async def test_a_send_during_start_up_is_typed_once_after_older_ones(sandbox):
    layout = sandbox.layout("boot", mock_agent("Ada"))
    store = Store(paths.db_path("boot"))
    first = Fleet(load_layout(layout), store)
    await first.start()
    await first.stop()  # the engine goes; Ada keeps running in tmux
    for i in range(3):  # what the earlier run left queued
        store.enqueue("human", "Ada", f"old {i}")
    fleet = Fleet(load_layout(layout), store)
    try:
        fleet.send(["Ada"], "sent during start-up")  # an agent's `swarm send`, say
        await fleet.start()
        assert fleet.created == []  # re-attached: the old run's queue is still Ada's
        fleet.send(["Ada"], "sent after")
        want = ["old 0", "old 1", "old 2", "sent during start-up", "sent after"]
        await async_wait_until(
            lambda: [m.status for m in store.messages()] == ["delivered"] * 5,
            60,
            "every message to be delivered",
        )
        await async_wait_until(lambda: len(sandbox.received("Ada")) >= 5, 10, "the typing")
        assert sandbox.received("Ada") == want
    finally:
        await fleet.down()
        store.close()


async def test_a_new_agent_does_not_get_a_dead_runs_backlog_before_its_prompt(sandbox):
    """tmux died with messages queued: the agents are started anew with their own prompt,
    and the old run's queue is settled as `swarm down` would (recorded and said)."""
    layout = sandbox.layout("reborn", mock_agent("Ada", prompt="your first prompt"))
    store = Store(paths.db_path("reborn"))
    old = [store.enqueue("human", "Ada", f"for the dead run {i}").id for i in range(2)]
    fleet = Fleet(load_layout(layout), store)
    notices = Notices()
    fleet.listener = notices
    try:
        fleet.send(["Ada"], "sent during start-up")
        await fleet.start()
        assert fleet.created == ["Ada"]
        await async_wait_until(lambda: len(sandbox.received("Ada")) >= 2, 30, "the typing")
        assert sandbox.received("Ada") == ["sent during start-up", "your first prompt"]
        rows = {m.id: m for m in store.messages()}
        assert [rows[i].status for i in old] == ["cancelled", "cancelled"]
        assert "tmux died" in rows[old[0]].detail
        assert any("Ada was started anew" in n and "2 messages" in n for n in notices.lines)
    finally:
        await fleet.down()
        store.close()
