"""The loop that reads every agent's screen is restarted when it fails, and says so.

Were it to stop, every tile and every state in the fleet would freeze where it was, with
nothing to say why. A bug in reading one screen (here: evaluating a round raises once) must
cost one notice and a second's gap, not the fleet's sight.
"""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_a_failing_screen_reader_is_restarted_and_said(
    sandbox, start_fleet, monkeypatch
) -> None:
    run = await start_fleet(sandbox.layout("reader", mock_agent("Ada")))
    await run.wait_states("idle", timeout=30)
    fleet, ada = run.fleet, run.fleet.agents["Ada"]
    notices: list[str] = []
    told = fleet.listener.notice
    monkeypatch.setattr(fleet.listener, "notice", lambda text: (notices.append(text), told(text)))
    evaluate = fleet.screens._evaluate  # noqa: SLF001 - the fault is injected right there
    failed: list[bool] = []

    def once_broken(now, agents):
        if agents and not failed:
            failed.append(True)
            raise RuntimeError("a screen no adapter expected")
        return evaluate(now, agents)

    monkeypatch.setattr(fleet.screens, "_evaluate", once_broken)
    server = sandbox.tmux("reader")
    server.send_keys("Ada", "first", literal=True)  # output: a round of captures
    await async_wait_until(lambda: failed, 10, "the injected failure")
    await async_wait_until(
        lambda: any(n.startswith("screen reader failed") and "restarted" in n for n in notices),
        10,
        "a notice that the screen reader was restarted",
        lambda: repr(notices),
    )
    server.send_keys("Ada", " second", literal=True)
    await async_wait_until(
        lambda: ada.tracker.reading.draft == "first second",
        10,
        "the restarted reader to read Ada's box",
        run.screens,
    )
