"""A fleet's link to one host: its tmux control client, its panes, its health, its GPUs."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.hosts.base import Host
from swarm_tui.tmux.client import ControlClient


@dataclass(frozen=True, slots=True)
class GpuStat:
    index: int
    util: int  # percent (UNKNOWN: the GPU does not say)
    mem_used: int  # MiB (UNKNOWN likewise)
    mem_total: int  # MiB (UNKNOWN likewise)


UNKNOWN = -1  # a value nvidia-smi reports as `[N/A]` or `[Not Supported]` (MIG partitions)


def parse_gpus(text: str) -> list[GpuStat]:
    """nvidia-smi's CSV (index, util %, MiB used, MiB total); a value it cannot give is
    UNKNOWN (the GPU is still listed); lines that are not such a row are skipped."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4 or not parts[0].isdigit():
            continue
        values = [
            int(p) if p.isdigit() else UNKNOWN if p.startswith("[") else None for p in parts[1:]
        ]
        if all(v is not None for v in values):
            out.append(GpuStat(int(parts[0]), *(v for v in values if v is not None)))
    return out


@dataclass(eq=False)
class HostLink:
    name: str
    host: Host
    control: ControlClient | None = None
    connected: bool = False
    since: float = field(default_factory=time.time)  # when `connected` last changed
    detail: str = ""  # why it is down, or "" when up
    by_pane: dict[str, Agent] = field(default_factory=dict)
    gpus: list[GpuStat] | None = None  # None: no nvidia-smi on this host (or not read yet)
    attempts: int = 0
    lease: str = ""  # what holds the node ("Slurm job 123"), "" for a node of its own
    lease_ends: float = 0.0  # wall time the lease ends (0: never)
    handoff_at: float = 0.0  # wall time its agents are asked for handoff notes (0: never)
    job: int = 0  # the Slurm job holding the node (0: none)
    ended: str = ""  # why the node is gone for good (its job ended): never reconnected

    def set_state(self, connected: bool, detail: str = "") -> bool:
        """Record the link's state; True if it changed."""
        changed = connected != self.connected
        if changed:
            self.since = time.time()
        self.connected, self.detail = connected, detail
        return changed


async def watch_gpus(link: HostLink, interval: float) -> None:
    """GPU utilisation and memory per GPU, where the host has nvidia-smi."""
    while True:
        if link.connected:
            try:
                out = await link.host.read_gpus()
            except SwarmError:
                out = ""
            if out is None:
                link.gpus = None
                return  # no GPUs here: never ask again
            if out:
                link.gpus = parse_gpus(out)
        await asyncio.sleep(interval)
