"""Where swarm keeps its state (SQLite journal) and its runtime files (socket, lock).

`SWARM_HOME` moves everything (tests use a temporary directory); otherwise state lives under
`$XDG_STATE_HOME/swarm` and runtime files under `$XDG_RUNTIME_DIR/swarm-<uid>` or the state dir.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from swarm_tui.errors import SwarmError

_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def state_dir() -> Path:
    home = os.environ.get("SWARM_HOME")
    if home:
        base = Path(home)
    else:
        xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        base = Path(xdg) / "swarm"
    return private_dir(base)


def private_dir(path: Path) -> Path:
    """`path` as a 0700 directory (created if needed): journals hold tokens and every
    message. One clear line when it cannot be (a read-only or full file system)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(13, "not writable")
    except OSError as exc:
        raise SwarmError(
            f"swarm's state directory {path} cannot be used "
            f"({exc.strerror or exc}): make it writable, or point SWARM_HOME at "
            "a directory that is"
        ) from None
    return path


def run_dir() -> Path:
    """A 0700 directory for sockets and lock files (short path: sockets are limited to 107)."""
    return private_dir(state_dir() / "run")  # the state dir first: a new SWARM_HOME is 0700


def fleet_slug(name: str) -> str:
    return _NAME.sub("_", name)[:40] or "fleet"  # client.fleet_slug repeats this rule


def socket_path(fleet: str) -> Path:
    return run_dir() / f"{fleet_slug(fleet)}.sock"


def lock_path(fleet: str) -> Path:
    return run_dir() / f"{fleet_slug(fleet)}.lock"


def db_path(fleet: str) -> Path:
    return state_dir() / f"{fleet_slug(fleet)}.sqlite3"


JOURNAL_FILES = ("", "-wal", "-shm")  # SQLite's WAL mode keeps a journal in three files


def set_aside_journal(fleet: str) -> Path | None:
    """Move the fleet's journal out of the way, for a fresh start: renamed with a timestamp,
    in the same directory, with its -wal and -shm (uncheckpointed writes live there). Returns
    where it went, or None if there was none. Call it only while holding the fleet's lock."""
    db = db_path(fleet)
    present = [suffix for suffix in JOURNAL_FILES if Path(f"{db}{suffix}").exists()]
    if not present:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept, n = db.with_name(f"{fleet_slug(fleet)}.{stamp}.sqlite3"), 1
    while any(Path(f"{kept}{suffix}").exists() for suffix in JOURNAL_FILES):
        kept, n = db.with_name(f"{fleet_slug(fleet)}.{stamp}-{n}.sqlite3"), n + 1
    # the -wal first: a new journal must never find an old -wal under its name and replay it
    for suffix in sorted(present, key=lambda s: s == ""):
        Path(f"{db}{suffix}").rename(f"{kept}{suffix}")
    return kept


def tmux_socket_name(fleet: str) -> str:
    """The `-L` name of a fleet's private tmux server; SWARM_HOME keeps tests apart."""
    home = os.environ.get("SWARM_HOME", "")
    suffix = ""
    if home:
        import hashlib

        suffix = "-" + hashlib.sha1(home.encode()).hexdigest()[:8]
    return f"swarm-{fleet_slug(fleet)}{suffix}"
