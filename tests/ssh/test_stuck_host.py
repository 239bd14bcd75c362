"""One host's tmux server stops answering: every other host's tiles go on as before.

At 16 nodes, one node's tmux server stopped (a suspended job, a node thrashing) must not
freeze the view of the other fifteen. Captures go down one channel per host; the read loop
must not wait on the silent one's round before reading the others. Here the local host's
real tmux server is frozen (cgroup freezer) with a read of its tile due, while an agent on
an SSH node prints a counter five times a second, on screen: that tile must keep changing
while the local server is frozen, long before the engine's answer deadline gives up on the
local link.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from swarm_tui.fleet.engine import Fleet
from swarm_tui.testing.freezer import frozen
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.testing.waiting import async_wait_until
from tests.ssh.conftest import serving

pytestmark = pytest.mark.integration

TICKER = "bash --norc --noprofile -c 'i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.2; done'"


def layout(tmp: Path) -> Path:
    path = tmp / "stuck.toml"
    path.write_text(
        'name = "ssh"\n[defaults]\ncli = "mock"\n[hosts.n1]\nssh = "n1"\n'
        '[[agents]]\nname = "Local"\nhost = "local"\ncli = "generic"\n'
        f'command = "{TICKER}"\n'
        '[[agents]]\nname = "Remote"\nhost = "n1"\ncli = "generic"\n'
        f'command = "{TICKER}"\n'
    )
    return path


def last_tick(fleet: Fleet, name: str) -> int:
    ticks = [ln.strip() for ln in fleet.agents[name].plain_screen() if ln.startswith("tick-")]
    return int(ticks[-1][5:]) if ticks else 0


async def test_a_silent_host_does_not_stop_the_others_tiles(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("n1")
    async with serving(layout(tmp_path), home) as fleet:
        fleet.set_visible({"Local", "Remote"})
        for name in ("Local", "Remote"):
            await async_wait_until(
                lambda n=name: last_tick(fleet, n) >= 3, 30, f"{name}'s ticks on its tile"
            )
        local = fleet.links["local"].host
        server = int((await local.run("display-message", "-p", "#{pid}"))[1])
        with frozen(server):
            frozen_at = time.monotonic()
            # a doorbell that rang just before the freeze: the local tile is read next round
            fleet.screens.mark(fleet.agents["Local"])
            seen = last_tick(fleet, "Remote")
            for _ in range(5):  # five fresh ticks in a row, each within a second
                await async_wait_until(
                    lambda s=seen: last_tick(fleet, "Remote") > s,
                    1.0,
                    "the remote tile to move on while local tmux is frozen",
                    lambda: "\n".join(fleet.agents["Remote"].plain_screen()[-3:]),
                )
                seen = last_tick(fleet, "Remote")
            assert time.monotonic() - frozen_at < 10, "slower than the answer deadline"
            assert fleet.links["local"].connected  # not yet given up on: just not waited for
        await async_wait_until(
            lambda: (
                last_tick(fleet, "Local") > 0 and fleet.agents["Local"].state.value != "unreachable"
            ),
            30,
            "the local tile back once tmux answers",
        )
