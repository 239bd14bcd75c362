"""A CLI redrawing for a window swarm resized is not at work. Paging the view, zooming and
resizing the terminal resize agents' windows; each CLI draws its screen again. That output
flipped an idle agent read from output alone (the generic adapter) to `working` and back,
restarting its idle stretch (its reminders, review-on-idle), and moved every idle clock to
`0s` (`idle 3m` became `idle 10s`). The real mock, as a generic agent, in real tmux windows
the engine resizes three times."""

from __future__ import annotations

import shlex
import sys

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.testing import FAST_MOCK_ARGS, async_holds, async_wait_until, shell_agent

pytestmark = pytest.mark.integration


async def test_a_redraw_for_a_new_size_is_not_work(sandbox, start_fleet) -> None:
    mock = shlex.join(
        [sys.executable, "-m", "swarm_tui.agents.mock", "--name", "Ada", *FAST_MOCK_ARGS]
    )
    run = await start_fleet(
        sandbox.layout("redraw", shell_agent("Ada", command=mock)), visible=False
    )
    await run.wait_states("idle")
    ada = run.fleet.agents["Ada"]
    idle_since, quiet_since = ada.tracker.since, ada.last_output_wall
    fleet = sandbox.tmux("redraw")
    for w, h in ((70, 20), (100, 30), (60, 18)):
        run.fleet.set_sizes({"Ada": (w, h)})
        await async_wait_until(
            lambda w=w, h=h: fleet.window_size("Ada") == f"{w}x{h}",
            10,
            f"Ada's window at {w}x{h}",
            lambda: fleet.window_size("Ada"),
        )
        # the engine has read the screen the mock drew for that width
        await async_wait_until(
            lambda w=w: "─" * w in [ln.strip() for ln in ada.plain_screen()],
            10,
            f"Ada's screen drawn for {w} columns",
            lambda: "\n".join(ada.plain_screen()),
        )
        await async_holds(
            lambda: ada.state is AgentState.IDLE, 1.0, "Ada idle", lambda: ada.state.value
        )
    assert ada.tracker.since == idle_since  # one idle stretch all along
    assert ada.last_output_wall == quiet_since  # and its clock did not restart

    # real output within the grace still counts: a message makes it work
    run.fleet.send(["Ada"], "hello")
    await async_wait_until(
        lambda: ada.tracker.since != idle_since, 10, "Ada's next state after a message"
    )
