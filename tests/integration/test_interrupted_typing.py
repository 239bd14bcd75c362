"""A queue that fails halfway through typing a message (a bug, an error nobody planned for)
is restarted; the message it was typing is then `uncertain`, never typed again and never
left `sending` for ever. The next message goes through as usual."""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


class Breaks:
    """The agent's control channel, failing once on the Enter that follows the paste."""

    def __init__(self, control) -> None:
        self._control, self.broke = control, False

    def __getattr__(self, name):
        return getattr(self._control, name)

    async def run(self, line: str):
        if line.endswith(" Enter") and not self.broke:
            self.broke = True
            raise RuntimeError("an error nobody planned for")
        return await self._control.run(line)


async def test_a_message_whose_typing_failed_is_uncertain_not_retyped(
    sandbox, start_fleet, monkeypatch
) -> None:
    run = await start_fleet(sandbox.layout("halfway", mock_agent("Ada")))
    await run.wait_states("idle", timeout=30)
    injector = run.fleet._injector  # noqa: SLF001 - the fault is injected in the queue
    control_for = injector._control  # noqa: SLF001
    broken: list[Breaks] = []

    def failing_once(agent):
        if not broken:
            broken.append(Breaks(control_for(agent)))
        return broken[0] if not broken[0].broke else control_for(agent)

    monkeypatch.setattr(injector, "_control", failing_once)
    (message,) = run.fleet.send(["Ada"], "half typed")
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        20,
        "a verdict after the queue's restart",
        lambda: repr(run.store.message(message.id)),
    )
    row = run.store.message(message.id)
    assert (row.status, row.detail) == (
        "uncertain",
        "its typing was interrupted; it is never typed twice",
    ), row
    (after,) = run.fleet.send(["Ada"], "the next one")
    await async_wait_until(
        lambda: run.store.message(after.id).status == "delivered",
        20,
        "the next message delivered",
        run.screens,
    )
    assert sandbox.received("Ada") == ["the next one"]  # the half-typed one was cleared
