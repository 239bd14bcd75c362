"""Nodes held for a time (a Slurm job's time limit): a while before the end, every agent on
them is asked for a handoff note, so the next allocation can go on with the work. Checked
every few seconds against the wall clock, never a timer that a suspended laptop would skip;
each node's agents are asked once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from swarm_tui.config.skills import skill_text
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.fresh import HANDOFF, handoff_path
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.ports import FreshHost

CHECK = 10.0  # seconds between two looks at the clock
PROBE_EVERY = 30.0  # seconds between two questions to the scheduler about a job

# whether a job holding nodes still runs: "" when it does, else what became of it
LeaseProbe = Callable[[int], Awaitable[str]]


class LeaseHost(FreshHost, Protocol):
    def lease_ended(self, link: HostLink, reason: str) -> None: ...
AHEAD = "{lease} ends in {left}; the work goes on in the next allocation. "


def _left(secs: float) -> str:
    mins = max(0, int(secs // 60))
    return f"{mins // 60}h{mins % 60:02d}m" if mins >= 60 else f"{mins}m"


def ask(fleet: FreshHost, link: HostLink, now: float) -> int:
    """Ask every agent on the node for its handoff note; how many were asked."""
    asked = 0
    for agent in [a for a in fleet.agents.values() if a.host == link.name]:
        try:
            path = handoff_path(fleet, agent)
        except SwarmError:
            continue  # a host without a state directory has nowhere to keep it
        text = AHEAD.format(lease=link.lease or "the node's lease",
                            left=_left(link.lease_ends - now)) + skill_text(
            "handoff", {"path": path, "agent": agent.name, "focus": agent.focus},
            fallback=HANDOFF)
        fleet.send([agent.name], text, sender="swarm")
        asked += 1
    return asked


async def watch_leases(fleet: LeaseHost, links: list[HostLink], probe: LeaseProbe | None,
                       check: float = CHECK, probe_every: float = PROBE_EVERY) -> None:
    """Handoff notes before each node's lease ends; and, with `probe`, the end of a job
    noticed (preempted, cancelled, out of time): its nodes' agents are lost."""
    done: set[str] = set()
    probed = 0.0
    while any(not link.ended for link in links):
        now = time.time()
        for link in links:
            if link.handoff_at and link.name not in done and now >= link.handoff_at:
                done.add(link.name)
                n = ask(fleet, link, now)
                fleet.listener.notice(
                    f"{link.name}: {link.lease} ends in {_left(link.lease_ends - now)}: "
                    f"{n} agent{'s' * (n != 1)} asked for a handoff note")
        if probe is not None and time.monotonic() - probed >= probe_every:
            probed = time.monotonic()
            for job in sorted({link.job for link in links if link.job and not link.ended}):
                why = await probe(job)
                if why:
                    gone = [link for link in links if link.job == job and not link.ended]
                    for link in gone:
                        fleet.lease_ended(link, f"{link.lease} {why}: its agents here are "
                                          "lost; what is queued for them waits for the next "
                                          "allocation (`swarm up` asks for one)")
                    fleet.listener.notice(f"Slurm job {job} {why}: "
                                          f"{', '.join(link.name for link in gone)} lost")
        await asyncio.sleep(check)  # the wall clock and the job, looked at again
