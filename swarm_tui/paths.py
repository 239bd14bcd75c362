"""Where swarm keeps its state (SQLite journal) and its runtime files (socket, lock).

`SWARM_HOME` moves everything (tests use a temporary directory); otherwise state lives under
`$XDG_STATE_HOME/swarm` and runtime files under `$XDG_RUNTIME_DIR/swarm-<uid>` or the state dir.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def state_dir() -> Path:
    home = os.environ.get("SWARM_HOME")
    if home:
        base = Path(home)
    else:
        xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        base = Path(xdg) / "swarm"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    return base


def run_dir() -> Path:
    """A 0700 directory for sockets and lock files (short path: sockets are limited to 107)."""
    home = os.environ.get("SWARM_HOME")
    path = Path(home) / "run" if home else state_dir() / "run"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def fleet_slug(name: str) -> str:
    return _NAME.sub("_", name)[:40] or "fleet"  # client.fleet_slug repeats this rule


def socket_path(fleet: str) -> Path:
    return run_dir() / f"{fleet_slug(fleet)}.sock"


def lock_path(fleet: str) -> Path:
    return run_dir() / f"{fleet_slug(fleet)}.lock"


def db_path(fleet: str) -> Path:
    return state_dir() / f"{fleet_slug(fleet)}.sqlite3"


def tmux_socket_name(fleet: str) -> str:
    """The `-L` name of a fleet's private tmux server; SWARM_HOME keeps tests apart."""
    home = os.environ.get("SWARM_HOME", "")
    suffix = ""
    if home:
        import hashlib

        suffix = "-" + hashlib.sha1(home.encode()).hexdigest()[:8]
    return f"swarm-{fleet_slug(fleet)}{suffix}"
