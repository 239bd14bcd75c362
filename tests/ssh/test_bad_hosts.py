"""Bad hosts give one clear line each, and the other hosts keep working."""

from __future__ import annotations

from pathlib import Path

import asyncssh
import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing.ssh_server import SSHCluster
from tests.ssh.test_cluster import FAST, until


def two_node_layout(tmp: Path, bad_tmux: str = "tmux", bad_python: str = "python3") -> Path:
    path = tmp / "ssh.toml"
    path.write_text(
        'name = "ssh"\n[defaults]\ncli = "mock"\n'
        '[hosts.good]\nssh = "good"\n'
        f'[hosts.bad]\nssh = "bad"\ntmux = "{bad_tmux}"\npython = "{bad_python}"\n'
        f'[[agents]]\nname = "Gauss"\nhost = "good"\nargs = {FAST}\n'
        f'[[agents]]\nname = "Hilbert"\nhost = "bad"\nargs = {FAST}\n'
    )
    return path


async def start_and_read(tmp: Path, home: Path, layout: Path) -> tuple[Fleet, Store]:
    store = Store(home / "ssh.sqlite3")
    fleet = Fleet(load_layout(layout), store)
    await fleet.start()
    return fleet, store


async def check(fleet: Fleet, store: Store, expected: str) -> None:
    try:
        bad = fleet.links["bad"]
        assert not bad.connected
        assert bad.detail.startswith("bad: ") and expected in bad.detail, bad.detail
        assert "\n" not in bad.detail
        assert fleet.links["good"].connected
        await until(lambda: fleet.agents["Gauss"].state is AgentState.IDLE, what="Gauss idle")
        assert fleet.agents["Hilbert"].state is AgentState.UNREACHABLE
        fleet.send(["Hilbert"], "waits for its host")  # queued, not lost, not an error
        assert [m.status for m in store.messages()] == ["queued"]
    finally:
        await fleet.down()
        store.close()


async def test_unknown_host_key_is_refused(cluster: SSHCluster, home: Path, tmp_path: Path) -> None:
    await cluster.add("good")
    await cluster.add("bad")
    good_only = [
        ln
        for ln in cluster.known_hosts.read_text().splitlines()
        if f"]:{cluster.nodes['good'].port} " in ln
    ]
    cluster.known_hosts.write_text("\n".join(good_only) + "\n")
    fleet, store = await start_and_read(tmp_path, home, two_node_layout(tmp_path))
    await check(fleet, store, "host key not trusted")
    assert "ssh bad" in fleet.links["bad"].detail  # says how to accept it


async def test_changed_host_key_is_refused(cluster: SSHCluster, home: Path, tmp_path: Path) -> None:
    await cluster.add("good")
    bad = await cluster.add("bad")
    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().strip()
    lines = cluster.known_hosts.read_text().splitlines()
    cluster.known_hosts.write_text(
        "\n".join(
            f"[127.0.0.1]:{bad.port} {other}" if f"]:{bad.port} " in ln else ln for ln in lines
        )
        + "\n"
    )
    fleet, store = await start_and_read(tmp_path, home, two_node_layout(tmp_path))
    await check(fleet, store, "host key not trusted")


async def test_wrong_port_is_reported(cluster: SSHCluster, home: Path, tmp_path: Path) -> None:
    await cluster.add("good")
    bad = await cluster.add("bad")
    bad.drop()  # nothing listens on its port any more
    fleet, store = await start_and_read(tmp_path, home, two_node_layout(tmp_path))
    await check(fleet, store, "cannot connect")


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        ({"bad_tmux": "/nonexistent/tmux"}, "tmux not found on the node"),
        ({"bad_python": "/nonexistent/python3"}, "cannot run /nonexistent/python3 on the node"),
    ],
)
async def test_node_without_tmux_or_python_is_reported(
    cluster: SSHCluster, home: Path, tmp_path: Path, missing: dict[str, str], expected: str
) -> None:
    await cluster.add("good")
    await cluster.add("bad")
    fleet, store = await start_and_read(tmp_path, home, two_node_layout(tmp_path, **missing))
    await check(fleet, store, expected)
