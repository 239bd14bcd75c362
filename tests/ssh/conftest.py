"""Fixtures for the SSH tests: in-process SSH nodes and a private state directory."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.server import FleetServer
from swarm_tui.fleet.store import Store
from swarm_tui.paths import socket_path
from swarm_tui.testing import netns
from swarm_tui.testing.ssh_server import SSHCluster


@asynccontextmanager
async def serving(layout: Path, home: Path) -> AsyncIterator[Fleet]:
    """The layout's fleet started in this process, its socket served; stopped after."""
    store = Store(home / "ssh.sqlite3")
    fleet = Fleet(load_layout(layout), store)
    server = FleetServer(fleet, socket_path(fleet.name))
    await server.start()
    await fleet.start()
    try:
        yield fleet
    finally:
        await server.stop()
        await fleet.down()
        store.close()


@contextmanager
def real_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str
) -> Iterator[netns.NetnsCluster]:
    """Real sshd nodes in network namespaces, the SSH config pointed at them; skipped with
    the reason where they cannot run (a failure in CI, where they must)."""
    reason = netns.available()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"real-sshd tests cannot run in CI: {reason}")
        pytest.skip(f"real-sshd tests skipped: {reason}")
    cluster = netns.NetnsCluster(tmp_path / "ns")
    monkeypatch.setenv("SWARM_SSH_CONFIG", str(cluster.config))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    try:
        for name in names:
            cluster.add(name)
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short SWARM_HOME (socket paths are limited to ~107 bytes); tmux servers reaped."""
    path = Path("/tmp") / f"sws-{secrets.token_hex(3)}"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("SWARM_HOME", str(path))
    monkeypatch.delenv("SWARM_SOCKET", raising=False)
    monkeypatch.delenv("SWARM_TOKEN", raising=False)
    monkeypatch.delenv("TMUX", raising=False)
    try:
        yield path
    finally:
        from swarm_tui.paths import tmux_socket_name

        base = tmux_socket_name("ssh")
        sockdir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        for sock in sockdir.glob(f"{base}*"):
            subprocess.run(["tmux", "-L", sock.name, "kill-server"], capture_output=True)
        shutil.rmtree(path, ignore_errors=True)
        for support in (Path.home() / ".cache" / "swarm").glob(f"{base}-*"):
            shutil.rmtree(support, ignore_errors=True)


@pytest.fixture
async def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SSHCluster]:
    c = SSHCluster(tmp_path)
    monkeypatch.setenv("SWARM_SSH_CONFIG", str(c.config))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    try:
        yield c
    finally:
        await c.close()
