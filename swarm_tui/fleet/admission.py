"""Who may hold a connection to the fleet's socket: bounds per process and in all, sized to
the descriptors the engine may open, and the one log line per kind of socket error.

A flood of connections that never ask (a stuck script, a hostile one) must not keep a
`swarm send` out: when every place is taken, the connection that has waited longest without
asking, of the process holding the most, is closed to make room.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

PER_CLIENT = 32  # open connections one local process may hold
LOG_EVERY = 60.0  # seconds between two log lines about the same kind of error
FULL = "swarm was full and this connection had asked nothing: closed"


def max_connections() -> int:
    """Open connections in all: a quarter of the descriptors the process may open, so
    clients can never take the ones the engine needs for tmux, SSH and the journal."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, min(1024, soft // 4))


def accept_batch() -> int:
    """The listen backlog, which is also how many connections asyncio accepts at once: small
    enough under a low descriptor limit that a flood cannot overshoot the cap by much."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(8, min(100, soft // 16))


class Sayer(Protocol):
    def write(self, data: bytes) -> None: ...


class Admission:
    """Open connections by peer pid (0: unknown), and those that have not asked yet."""

    def __init__(self, limit: int | None = None):
        self.limit = limit if limit is not None else max_connections()
        self.open: Counter[int] = Counter()
        # oldest first, with their peer: the candidates to give way (see _make_room)
        self._asking: dict[asyncio.Task[Any], tuple[Sayer, int]] = {}

    def admit(self, peer: int) -> str:
        """Count a new connection; why it must be refused, or "" (nodes' requests come
        through their relays, which bound their own)."""
        self.open[peer] += 1
        if peer and self.open[peer] > PER_CLIENT:
            return (
                f"process {peer} has {PER_CLIENT} connections to swarm open, the limit "
                "for one process: nothing was done"
            )
        if sum(self.open.values()) > self.limit and not self._make_room():
            return (
                f"swarm has {self.limit} connections open, its limit: nothing was done; "
                "try again in a few seconds"
            )
        return ""

    def left(self, peer: int) -> None:
        self.open[peer] -= 1
        if self.open[peer] <= 0:
            del self.open[peer]

    def asking(self, task: asyncio.Task[Any], writer: Sayer, peer: int) -> None:
        """`task` serves a connection that has not sent its request yet."""
        self._asking[task] = (writer, peer)

    def asked(self, task: asyncio.Task[Any]) -> None:
        self._asking.pop(task, None)

    def _make_room(self) -> bool:
        """Close a connection that has not sent its request: the oldest of the process that
        holds the most connections (a flood's, not the one a `swarm send` just opened).
        False if every connection has asked."""
        if not self._asking:
            return False
        most = max(self.open[peer] for _, peer in self._asking.values())
        task = next(t for t, (_, peer) in self._asking.items() if self.open[peer] == most)
        writer, _ = self._asking.pop(task)
        writer.write(json.dumps({"ok": False, "error": FULL}).encode() + b"\n")
        task.cancel()  # its handler closes the connection and calls `left`
        return True


class RateLimitedLog:
    """The loop's exception handler: one line on stderr per kind of error per interval (with
    how many were left out), never a flood of tracebacks (an fd limit makes accept() fail
    thousands of times a second)."""

    def __init__(self, notice: Callable[[str], None], every: float = LOG_EVERY):
        self.notice, self.every = notice, every
        self._last: dict[str, float] = {}
        self._quiet: Counter[str] = Counter()

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        what = str(context.get("message", "error"))
        key = f"{what}: {type(exc).__name__}" if exc else what
        now = time.monotonic()
        if now - self._last.get(key, -self.every) < self.every:
            self._quiet[key] += 1
            return
        self._last[key] = now
        left_out = self._quiet.pop(key, 0)
        more = f" ({left_out} more like it since the last report)" if left_out else ""
        line = f"{what}: {exc}" if exc else what
        print(f"swarm: {line}{more}", file=sys.stderr, flush=True)
        if isinstance(exc, OSError) and "accept" in what:
            self.notice(f"the socket cannot take connections: {exc.strerror or exc}")
