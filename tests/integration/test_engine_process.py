"""The engine as a process of its own: started in the background it outlives the process (and
the session) that started it; `swarm ps` lists it, `swarm logs` shows its log, `swarm stop`
stops it and leaves the agents running; a second engine for the same fleet is refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from swarm_tui.testing import Sandbox, mock_agent, wait_until

pytestmark = pytest.mark.integration

STARTER = """
import sys
from pathlib import Path
from swarm_tui import daemon
sys.exit(daemon.start(Path(sys.argv[1]), sys.argv[2], False, out=sys.stdout))
"""


def test_a_background_engine_outlives_its_starter_and_is_listed_logged_stopped(
    sandbox: Sandbox,
) -> None:
    layout = sandbox.layout("bg", mock_agent("Ada"), mock_agent("Bo"))
    # the starter runs in a session of its own, like a terminal; it exits once the engine
    # answers, and its whole session is then hung up on
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(layout), "bg"],
        env=sandbox.env,
        cwd=sandbox.files,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = starter.communicate(timeout=120)
    assert starter.returncode == 0, out + err
    assert "starting the engine of fleet 'bg'" in out and "bg.log" in out
    if _group_alive(starter.pid):
        os.killpg(starter.pid, signal.SIGHUP)
    try:
        _check_listed_logged_stopped(sandbox, layout, starter.pid)
    finally:
        sandbox.swarm("stop", "bg")  # never leave an engine behind a failed test


def _check_listed_logged_stopped(sandbox: Sandbox, layout, starter: int) -> None:
    ps = sandbox.swarm("ps")
    assert ps.returncode == 0 and ps.stdout.startswith("bg: pid "), ps.stdout + ps.stderr
    assert "2 agents, 0 watchers" in ps.stdout
    pid = int(ps.stdout.split("pid ")[1].split(",")[0])
    assert os.getsid(pid) != os.getsid(0) and os.getsid(pid) != starter  # its own session

    sent = sandbox.swarm("send", "Ada", "while nobody watches", "--wait", "20")
    assert sent.returncode == 0, sent.stderr
    logs = sandbox.swarm("logs", "bg")
    assert logs.returncode == 0
    assert "running in the background" in logs.stdout and "with 2 agents" in logs.stdout
    assert "human → Ada: delivered" in logs.stdout

    again = sandbox.swarm("up", str(layout), "--headless")
    assert again.returncode == 1
    assert f"pid {pid}" in again.stderr and len(again.stderr.strip().splitlines()) == 1

    stopped = sandbox.swarm("stop", "bg")
    assert stopped.returncode == 0, stopped.stderr
    assert f"engine (pid {pid}) stopped; its agents keep running" in stopped.stdout
    assert "no engine is running" in sandbox.swarm("ps").stdout
    assert sandbox.tmux("bg").alive() and set(sandbox.tmux("bg").agent_windows()) == {"Ada", "Bo"}
    assert "stopped by `swarm stop`" in sandbox.swarm("logs", "bg").stdout


def test_an_agent_may_not_stop_the_engine_unless_granted(sandbox: Sandbox) -> None:
    layout = sandbox.layout(
        "gate", mock_agent("Ada"), {"name": "Sh", "cli": "generic", "command": "bash --norc"}
    )
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    tmux = sandbox.tmux("gate")
    marker = sandbox.files / "stop.txt"
    tmux.send_keys("Sh", f"swarm stop > {marker} 2>&1; echo rc=$? >> {marker}", literal=True)
    tmux.send_keys("Sh", "Enter")
    wait_until(lambda: marker.exists() and "rc=" in marker.read_text(), 15, "swarm stop")
    text = marker.read_text()
    assert "Sh may not stop the engine" in text and "rc=1" in text, text
    ping = json.loads(sandbox.swarm("ls", "--json").stdout)
    assert {a["name"] for a in ping} == {"Ada", "Sh"}  # still running


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
