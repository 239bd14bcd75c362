"""On a remote node too, the kernel says who asks: the node relay walks the socket's peer
pid to an agent's pane there, so an agent that drops or borrows a SWARM_TOKEN is still
itself, and a process in no agent's pane is nobody (never the human)."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.agents.base import AgentState
from swarm_tui.fleet.engine import Fleet
from swarm_tui.hosts.ssh import SSHHost
from tests.ssh.test_cluster import fleet, received, until

__all__ = ["fleet"]  # the fixture, shared with test_cluster


async def test_an_agent_on_a_node_is_itself_whatever_its_token(
    fleet: Fleet, tmp_path: Path
) -> None:
    await until(lambda: fleet.agents["Gauss"].state is AgentState.IDLE, what="Gauss idle")
    await until(lambda: fleet.agents["Shell"].state is AgentState.IDLE, what="Shell idle")
    gauss = fleet.store.token_for("Gauss")
    fleet.send(["Shell"], 'env -u SWARM_TOKEN swarm send Gauss "no token"')
    await until(lambda: received(tmp_path, "Gauss"), what="the tokenless message")
    fleet.send(["Shell"], f'SWARM_TOKEN={gauss} swarm send Gauss "borrowed"')
    await until(lambda: len(received(tmp_path, "Gauss")) == 2, what="the borrowing message")
    assert received(tmp_path, "Gauss") == [
        "[message from Shell] no token",
        "[message from Shell] borrowed",
    ]
    assert [m.sender for m in fleet.store.messages() if m.recipient == "Gauss"] == [
        "Shell",
        "Shell",
    ]


async def test_a_process_in_no_pane_on_a_node_is_nobody(fleet: Fleet, tmp_path: Path) -> None:
    host = fleet.links["n1"].host
    assert isinstance(host, SSHHost)
    client = f"SWARM_SOCKET={host.remote_socket} {host.dir}/bin/swarm"
    rc, out = await host.shell(f'env -u SWARM_TOKEN {client} send Gauss "from nowhere"')
    assert rc != 0 and "comes from an agent's pane there" in out, out
    # a token of an agent on another host does not pass either
    hilbert = fleet.store.token_for("Hilbert")  # on n2
    rc, out = await host.shell(f'SWARM_TOKEN={hilbert} {client} send Gauss "wrong node"')
    assert rc != 0 and "comes from an agent's pane there" in out, out
    # an agent's own background job that left its pane keeps its token's word
    gauss = fleet.store.token_for("Gauss")
    rc, out = await host.shell(f'SWARM_TOKEN={gauss} {client} send Noether "from my job"')
    assert rc == 0, out
    assert [(m.sender, m.recipient) for m in fleet.store.messages()] == [("Gauss", "Noether")]
