"""`swarm down` stops the agents' processes, not only their tmux server: a CLI that ignores
SIGHUP (Gemini CLI's relaunched node does) must not live on after its fleet."""

from __future__ import annotations

import os
import sys

import pytest

from swarm_tui.testing import async_wait_until, shell_agent, wait_until

pytestmark = pytest.mark.integration

STUBBORN = (
    "import os, signal, sys, time; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    "child = os.fork() or signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    "open(sys.argv[1] + str(os.getpid()), 'w').close(); time.sleep(1000)"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_down_stops_a_cli_that_ignores_sighup(sandbox, start_fleet, tmp_path):
    marks = tmp_path / "pids"
    marks.mkdir()
    command = f"{sys.executable} -c {STUBBORN!r} {marks}/"
    run = await start_fleet(sandbox.layout("hup", shell_agent("Gem", command)))
    await async_wait_until(
        lambda: len(list(marks.iterdir())) == 2, 15, "the CLI and its helper to start", run.screens
    )
    pids = [int(p.name) for p in marks.iterdir()]
    assert all(_alive(p) for p in pids)
    await run.fleet.down()
    try:
        wait_until(lambda: not any(_alive(p) for p in pids), 10, "every process to stop")
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, 9)
