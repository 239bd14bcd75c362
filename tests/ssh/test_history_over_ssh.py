"""An agent's history on an SSH node (an in-process SSH server) comes down the control
channel the tiles use: no new connection, no exec channel; and a node that is cut off is
one line naming it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from swarm_tui.fleet.engine import Fleet
from swarm_tui.paths import socket_path
from swarm_tui.protocol.client import FleetClient, Refused
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.testing.waiting import async_wait_until
from tests.ssh.conftest import serving

ARGS = (
    '["--scrollback", "--backlog", "300", "--startup", "0.2", "--permission-rate", "0", '
    '"--give-up-rate", "0", "--quiet-rate", "0"]'
)


@pytest.fixture
async def fleet(cluster: SSHCluster, home: Path, tmp_path: Path) -> AsyncIterator[Fleet]:
    await cluster.add("n1")
    path = tmp_path / "ssh.toml"
    path.write_text(
        'name = "ssh"\n[hosts.n1]\nssh = "n1"\n'
        f'[[agents]]\nname = "Far"\nhost = "n1"\ncli = "mock"\nargs = {ARGS}\n'
    )
    async with serving(path, home) as f:
        yield f


async def test_history_of_an_agent_on_a_node_comes_down_the_control_channel(
    fleet: Fleet, cluster: SSHCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = fleet.links["n1"]
    await async_wait_until(lambda: link.connected, 20, "n1 connected")
    connections = len(cluster.nodes["n1"].connections)

    def no_exec(*args: object, **kwargs: object) -> None:
        raise AssertionError("history must not open an exec channel")

    monkeypatch.setattr(link.host, "shell", no_exec)
    monkeypatch.setattr(link.host, "run", no_exec)
    client = FleetClient(socket_path(fleet.name))

    async def backlog() -> list[int]:
        lines = (await client.history("Far")).lines
        return [int(m.group(1)) for ln in lines if (m := re.search(r"line (\d{5}) of Far", ln))]

    await async_wait_until(lambda: backlog(), 20, "Far's backlog in its history")
    assert await backlog() == list(range(1, 301))
    assert len(cluster.nodes["n1"].connections) == connections  # no new SSH connection
    cluster.nodes["n1"].drop()
    await async_wait_until(lambda: not link.connected, 15, "n1 link down")
    with pytest.raises(Refused, match=r"^Far runs on host n1, which is down \(") as caught:
        await client.history("Far")
    assert "\n" not in str(caught.value)
