"""Clients that connect and never ask hold nothing for good: they are dropped after a few
seconds, and `swarm ls` answers meanwhile."""

from __future__ import annotations

import socket

import pytest

from swarm_tui import paths
from swarm_tui.fleet import server as server_module
from swarm_tui.fleet.admission import PER_CLIENT
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


async def test_idle_connections_are_dropped_and_others_served(sandbox, start_fleet, monkeypatch):
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

        await async_wait_until(
            lambda: all(closed(s) for s in idle),
            10,
            "the idle connections to be dropped",
            run.screens,
        )
    finally:
        for sock in idle:
            sock.close()


IDLER = """
import socket, sys, time
socks = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:
        pass  # the queue is full: a connection that will never be accepted is idle too
    socks.append(s)
print("open", flush=True)
sys.stdin.read()
"""


async def test_200_idle_connections_from_other_processes_leave_ls_under_a_second(
    sandbox, start_fleet
):
    import asyncio
    import sys
    import time

    await start_fleet(sandbox.layout("crowd", mock_agent("Ada")))
    idlers = []
    for _ in range(4):  # 4 processes x 50 idle connections
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            IDLER,
            str(paths.socket_path("crowd")),
            "50",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 10)).strip() == b"open"
        idlers.append(proc)
    try:
        from swarm_tui.client import request

        for _ in range(3):  # the engine's answer, timed without the CLI's own start-up
            started = time.monotonic()
            reply = await asyncio.to_thread(request, paths.socket_path("crowd"), {"op": "ls"})
            took = time.monotonic() - started
            assert [a["name"] for a in reply["agents"]] == ["Ada"]
            assert took < 1.0, f"ls took {took:.2f} s with 200 idle connections open"
        ls = await sandbox.aswarm("ls")
        assert ls.returncode == 0 and "Ada" in ls.stdout, ls.stderr
    finally:
        for proc in idlers:
            proc.kill()
            await proc.wait()
