"""A fleet across SSH nodes (in-process SSH servers): same view, same send, outages survived."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.testing.waiting import async_wait_until
from tests.ssh.conftest import serving

FAST = (
    '["--work", "0.3", "--startup", "0.2", "--permission-rate", "0", '
    '"--give-up-rate", "0", "--quiet-rate", "0"]'
)


async def until(predicate: Callable[[], object], timeout: float = 20.0, what: str = "") -> None:
    await async_wait_until(predicate, timeout, what or "condition")


def received(tmp: Path, name: str) -> list[str]:
    log = tmp / f"{name}.log"
    return [json.loads(x)["text"] for x in log.read_text().splitlines()] if log.exists() else []


def layout(tmp: Path, hosts: list[str]) -> Path:
    text = ['name = "ssh"\n[defaults]\ncli = "mock"\n']
    for h in hosts:
        text.append(f'[hosts.{h}]\nssh = "{h}"\n')
    agents = [("Gauss", hosts[0]), ("Hilbert", hosts[-1]), ("Noether", "local")]
    for name, host in agents:
        text.append(
            f'[[agents]]\nname = "{name}"\nhost = "{host}"\nargs = {FAST}\n'
            f'env = {{ SWARM_MOCK_LOG = "{tmp / (name + ".log")}" }}\n'
        )
    text.append(
        f'[[agents]]\nname = "Shell"\nhost = "{hosts[0]}"\ncli = "generic"\n'
        'command = "bash --norc --noprofile"\n'
    )
    path = tmp / "ssh.toml"
    path.write_text("\n".join(text))
    return path


@pytest.fixture
async def fleet(cluster: SSHCluster, home: Path, tmp_path: Path) -> AsyncIterator[Fleet]:
    await cluster.add("n1")
    await cluster.add("n2")
    async with serving(layout(tmp_path, ["n1", "n2"]), home) as f:
        yield f


async def test_agents_on_nodes_come_up_in_one_fleet(fleet: Fleet, tmp_path: Path) -> None:
    assert {a.spec.host for a in fleet.agents.values()} == {"n1", "n2", "local"}
    assert all(link.connected for link in fleet.links.values())
    for name in ("Gauss", "Hilbert", "Noether"):
        await until(lambda n=name: fleet.agents[n].state is AgentState.IDLE, what=f"{name} idle")
    # each node runs its own tmux server: pane ids are per server, captures per node
    assert fleet.agents["Gauss"].screen and "Gauss" in "".join(fleet.agents["Gauss"].screen)
    assert "Hilbert" in "".join(fleet.agents["Hilbert"].screen)
    fleet.send(["Hilbert"], "line one\n-line two; $(x) #{pane_id}")
    await until(lambda: received(tmp_path, "Hilbert"), what="Hilbert's message")
    assert received(tmp_path, "Hilbert") == ["line one\n-line two; $(x) #{pane_id}"]


async def test_agent_on_one_node_messages_agent_on_another(fleet: Fleet, tmp_path: Path) -> None:
    await until(lambda: fleet.agents["Hilbert"].state is AgentState.IDLE, what="Hilbert idle")
    await until(lambda: fleet.agents["Shell"].state is AgentState.IDLE, what="Shell idle")
    # typed into a shell on n1: the node's own `swarm` client, through the forwarded socket
    fleet.send(["Shell"], 'swarm send Hilbert "hello from n1"')
    await until(lambda: received(tmp_path, "Hilbert"), what="the message from n1")
    assert received(tmp_path, "Hilbert") == ["[message from Shell] hello from n1"]

    def rows() -> list[tuple[str, str]]:
        return [(m.sender, m.status) for m in fleet.store.messages() if m.recipient == "Hilbert"]

    await until(lambda: rows() != [("Shell", "sending")], what="the delivery verdict")
    assert rows() == [("Shell", "delivered")]


async def test_node_outage_queues_and_delivers_once_after_reconnect(
    fleet: Fleet, cluster: SSHCluster, tmp_path: Path
) -> None:
    await until(lambda: fleet.agents["Hilbert"].state is AgentState.IDLE, what="Hilbert idle")
    cluster.nodes["n2"].drop()
    await until(lambda: not fleet.links["n2"].connected, timeout=10, what="n2 link down")
    assert fleet.links["n1"].connected and fleet.links["local"].connected
    # what an agent on a node that cannot be reached does is unknown: never "idle"
    assert fleet.agents["Hilbert"].state is AgentState.UNREACHABLE
    assert fleet.agents["Noether"].state is not AgentState.UNREACHABLE
    pane_before = fleet.agents["Hilbert"].pane
    fleet.send(["Hilbert"], "while you were away")
    fleet.send(["Noether"], "local still works")
    await until(lambda: received(tmp_path, "Noether") == ["local still works"], what="local")
    assert received(tmp_path, "Hilbert") == []
    await cluster.nodes["n2"].restart()
    await until(lambda: fleet.links["n2"].connected, timeout=15, what="n2 reconnected")
    await until(
        lambda: fleet.agents["Hilbert"].state is not AgentState.UNREACHABLE,
        what="Hilbert reachable again",
    )
    await until(lambda: received(tmp_path, "Hilbert"), what="the queued message")
    assert received(tmp_path, "Hilbert") == ["while you were away"]
    assert fleet.agents["Hilbert"].pane == pane_before  # re-attached, not restarted

    def rows() -> list[str]:
        return [m.status for m in fleet.store.messages() if m.recipient == "Hilbert"]

    await until(lambda: rows() != ["sending"], what="delivery verdict")
    assert rows() == ["delivered"]


async def test_unreachable_node_is_reported_and_others_work(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("n1")
    dead = await cluster.add("n2")
    dead.drop()
    loaded = load_layout(layout(tmp_path, ["n1", "n2"]))
    store = Store(home / "ssh.sqlite3")
    f = Fleet(loaded, store)
    await f.start()
    try:
        assert f.links["n1"].connected and not f.links["n2"].connected
        assert "n2: cannot connect" in f.links["n2"].detail
        await until(lambda: f.agents["Gauss"].state is AgentState.IDLE, what="Gauss idle")
    finally:
        await f.down()
        store.close()


async def test_proxyjump_from_ssh_config_is_honoured(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    jump = await cluster.add("bastion")
    await cluster.add("n1", jump="bastion")
    await cluster.add("n2", jump="bastion")
    store = Store(home / "ssh.sqlite3")
    f = Fleet(load_layout(layout(tmp_path, ["n1", "n2"])), store)
    await f.start()
    try:
        assert f.links["n1"].connected and f.links["n2"].connected
        ports = {cluster.nodes["n1"].port, cluster.nodes["n2"].port}
        assert {port for _, port in jump.tunnels} == ports  # both went through the bastion
        f.send(["Hilbert"], "through the bastion")
        await until(lambda: received(tmp_path, "Hilbert"), what="message via ProxyJump")
    finally:
        await f.down()
        store.close()
