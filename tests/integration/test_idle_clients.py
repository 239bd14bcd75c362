"""Clients that connect and never ask hold nothing for good: they are dropped after a few
seconds, and `swarm ls` answers meanwhile."""

from __future__ import annotations

import socket

import pytest

from swarm_tui import paths
from swarm_tui.fleet import server as server_module
from swarm_tui.fleet.server import PER_CLIENT
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_idle_connections_are_dropped_and_others_served(sandbox, start_fleet,
                                                              monkeypatch):
    monkeypatch.setattr(server_module, "REQUEST_WAIT", 1.0)
    run = await start_fleet(sandbox.layout("idlec", mock_agent("Ada")))
    idle = []
    for _ in range(PER_CLIENT):  # fewer than the listen backlog and one process's share
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(paths.socket_path("idlec")))
        sock.setblocking(False)
        idle.append(sock)
    try:
        ls = await sandbox.aswarm("ls")
        assert ls.returncode == 0 and "Ada" in ls.stdout, ls.stderr

        def closed(sock: socket.socket) -> bool:
            try:
                return sock.recv(1) == b""  # the engine hung up
            except BlockingIOError:
                return False

        await async_wait_until(lambda: all(closed(s) for s in idle), 10,
                               "the idle connections to be dropped", run.screens)
    finally:
        for sock in idle:
            sock.close()
