"""Restarting swarm re-attaches to the agents it left running in tmux: same windows, same
panes, same processes, no duplicates, states read again from the screens."""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent, wait_until

pytestmark = pytest.mark.integration


def fleet_layout(sandbox, fleet: str):
    return sandbox.layout(
        fleet, mock_agent("Gauss", prompt="warm up"), mock_agent("Hilbert", prompt="warm up")
    )


async def test_in_process_restart_reuses_windows_and_panes(sandbox, start_fleet):
    layout = fleet_layout(sandbox, "again")
    tmux = sandbox.tmux("again")
    first = await start_fleet(layout)
    assert sorted(first.fleet.created) == ["Gauss", "Hilbert"]
    await async_wait_until(
        lambda: sandbox.received("Gauss") == sandbox.received("Hilbert") == ["warm up"],
        10,
        "the layout's first prompt to reach both agents",
        first.screens,
    )
    before = tmux.windows()
    panes = {name: agent.pane for name, agent in first.fleet.agents.items()}

    await first.stop()
    assert tmux.has_session("again"), "stopping swarm must leave the agents running"
    assert tmux.windows() == before  # same windows, panes and processes, none dead

    second = await start_fleet(layout)
    assert second.fleet.created == []
    assert {n: a.pane for n, a in second.fleet.agents.items()} == panes
    after = tmux.windows()
    assert after == before, "windows were added, lost or restarted"
    agents = [w.agent for w in after if w.agent]
    assert sorted(agents) == ["Gauss", "Hilbert"]

    # the state starts unknown and is read again from the screens
    assert {a.state.value for a in second.fleet.agents.values()} <= {"starting", "idle"}
    await second.wait_states("idle")
    (message,) = second.fleet.send(["Hilbert"], "after the restart")
    await async_wait_until(
        lambda: second.store.message(message.id).status == "delivered",
        10,
        "delivery through the new control client",
        second.screens,
    )
    assert sandbox.received("Hilbert") == ["warm up", "after the restart"]
    assert sandbox.received("Gauss") == ["warm up"], "the first prompt was sent again"


def test_headless_restart_after_ctrl_c_reattaches(sandbox):
    layout = fleet_layout(sandbox, "hl")
    tmux = sandbox.tmux("hl")
    owner = sandbox.start_headless(layout)
    assert "re-attached 0" in owner.wait_ready()
    wait_until(
        lambda: sandbox.received("Gauss") and sandbox.received("Hilbert"),
        10,
        "both first prompts to be delivered",
        owner.output,
    )
    before = tmux.windows()

    owner.interrupt()
    assert owner.wait() == 0, owner.output()
    assert not sandbox.socket_path("hl").exists(), "the socket outlived its swarm"
    assert tmux.windows() == before

    again = sandbox.start_headless(layout)
    assert "with 2 agents (re-attached 2)" in again.wait_ready()
    assert tmux.windows() == before
    # a second owner of the same fleet is refused in one line while this one runs
    busy = sandbox.swarm("up", str(layout), "--headless")
    assert busy.returncode != 0 and "Traceback" not in busy.stderr
    assert busy.stderr.strip().splitlines() == [
        f"swarm: fleet 'hl' is already run by swarm pid {again.pid}: quit that one first "
        "(its agents keep running), or talk to it with `swarm send` / `swarm ls`"
    ]
    assert sandbox.received("Gauss") == sandbox.received("Hilbert") == ["warm up"]
