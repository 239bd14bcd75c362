"""What the fault tests share: a raw request on a fleet's socket that reports instead of
raising, the journal as it stands (or nothing yet), and a journal's statuses in one line."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

from swarm_tui.testing import Sandbox


def raw_request(
    path: Path, payload: dict[str, Any], timeout: float = 10.0
) -> tuple[dict[str, Any] | None, str]:
    """One JSON line to the fleet's socket; (reply, "") or (None, what went wrong)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as exc:  # refused, no such file, reset, timeout
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        sock.close()
    if not data:
        return None, "closed without an answer"
    return json.loads(data), ""


def journal_of(sandbox: Sandbox, fleet: str) -> list[dict[str, Any]]:
    """The fleet's journal rows, or [] while it is not there yet or locked for a moment."""
    try:
        return sandbox.journal(fleet)
    except Exception:  # noqa: BLE001 - not created yet, or busy for a moment
        return []


def summary(rows: list[dict[str, Any]]) -> str:
    return ", ".join(f"{s}={n}" for s, n in sorted(Counter(r["status"] for r in rows).items()))
