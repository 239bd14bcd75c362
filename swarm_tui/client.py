"""Talk to the running swarm over its Unix socket. Stdlib only: it also runs on remote nodes.

The socket is `$SWARM_SOCKET` (set in every agent's environment), or the one for `--fleet`,
or the only fleet running under the state directory.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any


class ClientError(Exception):
    """One line for the user: no swarm running, or the swarm refused the request."""


def find_socket(fleet: str | None, run_dir: Path) -> Path:
    if fleet:
        path = run_dir / f"{fleet}.sock"
        if not path.exists():
            raise ClientError(f"no swarm is running fleet {fleet!r} (start it: swarm up {fleet})")
        return path
    env = os.environ.get("SWARM_SOCKET")
    if env:
        return Path(env)
    socks = sorted(run_dir.glob("*.sock")) if run_dir.is_dir() else []
    if not socks:
        raise ClientError("no swarm is running (start one: swarm demo, or swarm up LAYOUT)")
    if len(socks) > 1:
        names = ", ".join(s.stem for s in socks)
        raise ClientError(f"several fleets are running ({names}): choose one with --fleet NAME")
    return socks[0]


def request(path: Path, payload: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    token = os.environ.get("SWARM_TOKEN")
    if token and "token" not in payload:
        payload = {**payload, "token": token}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        raise ClientError(
            f"no swarm is running on {path} (start one: swarm demo, or swarm up LAYOUT)"
        ) from None
    try:
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except TimeoutError:
        raise ClientError(f"swarm on {path} did not answer within {timeout:.0f} s") from None
    finally:
        sock.close()
    if not data:
        raise ClientError(f"swarm on {path} closed the connection without an answer")
    reply: dict[str, Any] = json.loads(data)
    if not reply.get("ok"):
        raise ClientError(str(reply.get("error", "request refused")))
    return reply
