"""Who is on the other end of the socket, from the kernel where it can say.

A local client's peer pid comes from `SO_PEERCRED`; a process that descends from an agent's
pane is that agent, whatever its environment says (an agent that unsets or borrows a
`SWARM_TOKEN` is still itself). On a remote node the node relay (swarm_tui/relay.py) does
the same with the node's kernel and says which agent asked.
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import Any

PROC = Path("/proc")


def peer_pid(sock: Any) -> int | None:
    """The pid of the process at the other end of a Unix socket (a socket or asyncio's
    wrapper of one), where the kernel says."""
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid, _, _ = struct.unpack("3i", raw)
    return pid or None


def ancestors(pid: int, proc: Path = PROC) -> list[int]:
    """`pid` and its parents up to (not including) init, nearest first."""
    chain: list[int] = []
    while pid > 1 and pid not in chain and len(chain) < 256:
        chain.append(pid)
        try:
            stat = (proc / str(pid) / "stat").read_text()
        except OSError:
            break
        # the command name may hold spaces and parentheses: fields start after the last ')'
        fields = stat[stat.rindex(")") + 2 :].split()
        pid = int(fields[1])
    return chain

