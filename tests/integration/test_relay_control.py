"""The engine's control-mode client on a node reaches tmux through the relay's control socket
(an SSH stream to it: no session and no login shell on the node): each connection becomes a
`tmux -C attach` whose standard input and output are the connection. A real tmux and relay."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import swarm_tui
from swarm_tui.testing import wait_until

pytestmark = pytest.mark.integration
RELAY = Path(swarm_tui.__file__).parent / "relay.py"


def _read_until(conn: socket.socket, marker: bytes, deadline: float) -> bytes:
    data = b""
    conn.settimeout(0.5)
    while marker not in data:
        if time.monotonic() > deadline:
            raise AssertionError(f"no {marker!r} from tmux; got {data[-500:]!r}")
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            raise AssertionError(f"the control socket closed; got {data[-500:]!r}")
        data += chunk
    return data


def test_a_connection_to_the_control_socket_is_a_tmux_control_client(tmp_path: Path) -> None:
    sock = f"swarm-relay-{os.getpid()}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "fleet", "sleep 600"], check=True)
    control = tmp_path / "control.sock"
    options = {"control": {"path": str(control), "argv": ["-C", "attach-session", "-t", "=fleet"]}}
    relay = subprocess.Popen(
        [
            sys.executable,
            str(RELAY),
            str(tmp_path / "s.sock"),
            json.dumps(tmux),
            json.dumps(options),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert relay.stdout is not None and relay.stdin is not None
        assert json.loads(relay.stdout.readline()) == {"ready": True}
        assert stat.S_IMODE(control.stat().st_mode) == 0o600
        deadline = time.monotonic() + 10
        for _ in range(2):  # each connection is a client of its own
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(str(control))
                _read_until(conn, b"%end", deadline)  # the attach's own block
                conn.sendall(b"display-message -p 'hello #{session_name}'\n")
                assert b"hello fleet" in _read_until(conn, b"hello fleet", deadline)
        wait_until(
            lambda: (
                subprocess.run([*tmux, "list-clients"], capture_output=True, text=True).stdout == ""
            ),
            5,
            "the closed connections' tmux clients to end",
        )
        relay.stdin.close()  # the engine hangs up: both sockets go with the relay
        assert relay.wait(timeout=10) == 0
        assert not control.exists() and not (tmp_path / "s.sock").exists()
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.wait()
        subprocess.run([*tmux, "kill-server"], capture_output=True)
