"""Who is on the other end of the socket, from the kernel where it can say.

A local client's peer pid comes from `SO_PEERCRED`; a process that descends from an agent's
pane is that agent, whatever its environment says (an agent that unsets or borrows a
`SWARM_TOKEN` is still itself). On a remote node the node relay (swarm_tui/relay.py) does
the same with the node's kernel and says which agent asked.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.injection import HUMAN
from swarm_tui.fleet.link import HostLink
from swarm_tui.tmux.commands import quote

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


class _Agent(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def host(self) -> str: ...


class Senders:
    """Who sent a request, from what can be known: the kernel's word (a local peer pid, a
    node relay's finding) beats a token, and a token beats nothing."""

    def __init__(
        self,
        agents: Mapping[str, _Agent],
        agent_for_token: Callable[[str], str | None],
        local_panes: Callable[[], Awaitable[dict[str, str] | None]],
    ):
        self.agents = agents
        self.agent_for_token = agent_for_token
        # pane pid -> agent name on this machine; None while they cannot be listed (the
        # local tmux server's link is down)
        self.local_panes = local_panes

    async def sender_for(
        self,
        token: str | None,
        pid: int | None,
        node: tuple[str, str] | None = None,
        proven: bool = False,
    ) -> str:
        """The agent whose pane the local process `pid` descends from (whatever its
        environment says); else its token's agent; else the human. From a node (`node` =
        host, the agent its relay found by the node's kernel): that agent; else its token's
        agent on that node; never the human. `proven`: a local sender must be told by the
        kernel and the panes (the human is never assumed for want of them): refused when
        the local panes cannot be listed or the peer's pid is unknown."""
        if node is not None:
            host, found = node
            agent = self.agents.get(found)
            if agent is None and token:
                agent = self.agents.get(self.sender_for_token(token))
            if agent is None or agent.host != host:
                raise SwarmError(
                    f"a request from node {host} comes from an agent's pane there "
                    "(or carries the SWARM_TOKEN of an agent on that node)"
                )
            return agent.name
        if pid is None:
            if proven:
                raise SwarmError(
                    "who sent this cannot be told (the kernel did not name the "
                    "process): nothing was done"
                )
            return self.sender_for_token(token)
        panes = await self.local_panes()
        if panes is None:
            if proven:
                raise SwarmError(
                    "who sent this cannot be told: the local tmux server's panes "
                    "cannot be listed (its link is down); nothing was done, try "
                    "again when it is back"
                )
            panes = {}
        for ancestor in ancestors(pid):
            name = panes.get(str(ancestor))
            if name and name in self.agents:
                return name
        return self.sender_for_token(token)

    def sender_for_token(self, token: str | None) -> str:
        if not token:
            return HUMAN
        name = self.agent_for_token(token)
        if name is None:
            raise SwarmError(
                "SWARM_TOKEN is not a token of this fleet: unset it or use the "
                "shell of an agent of this fleet"
            )
        return name


async def local_panes(link: HostLink | None) -> dict[str, str] | None:
    """pane pid -> agent name, for the local tmux server ({} with no agent on this
    machine); None while they cannot be listed (its link is down, or tmux refused)."""
    if link is None:
        return {}
    if not link.connected or link.control is None:
        return None
    try:
        async with asyncio.timeout(5):  # a link that never answers tells nobody's pane
            reply = await link.control.run(
                f"list-panes -s -t ={link.host.session} -F " + quote("#{pane_pid}|#{@swarm_agent}")
            )
    except (SwarmError, OSError, TimeoutError):
        return None
    return dict(line.split("|", 1) for line in reply.text().splitlines() if "|" in line)
