"""One process owns a fleet at a time: an flock on a lock file that names its PID."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from swarm_tui.errors import FleetBusy


class FleetLock:
    def __init__(self, path: Path, fleet: str):
        self.path = path
        self.fleet = fleet
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.read(fd, 32).decode().strip() or "?"
            os.close(fd)
            raise FleetBusy(
                f"fleet {self.fleet!r} is already run by swarm pid {pid}: quit that one first "
                "(its agents keep running), or talk to it with `swarm send` / `swarm ls`"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
