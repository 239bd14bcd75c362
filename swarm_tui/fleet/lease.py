"""Nodes held for a time (a Slurm job's time limit): a while before the end, every agent on
them is asked for a handoff note, so the next allocation can go on with the work. Checked
every few seconds against the wall clock, never a timer that a suspended laptop would skip;
each node's agents are asked once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.fresh import handoff_path
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.ports import FreshHost
from swarm_tui.hosts.base import JOB_SUSPENDED

HANDOFF_TEXT = (  # the `handoff` skill says a restart comes in a moment: not so here
    "{lease} ends in {left}; the work goes on in the next allocation, maybe with a fresh "
    "context. Write a handoff note for the agent who continues your work to the file "
    "{path}: what you are working on, what is done, what is left, which files matter, and "
    "anything surprising you learned. Be concrete. Reply with one line, 'handoff written', "
    "when the file is saved, then go on with your work."
)
CHECK = 10.0  # seconds between two looks at the clock
PROBE_EVERY = 30.0  # seconds between two questions to the scheduler about a job

# whether a job holding nodes still runs: "" when it does, JOB_SUSPENDED while it is
# stopped, else what became of it
LeaseProbe = Callable[[int], Awaitable[str]]


class LeaseHost(FreshHost, Protocol):
    def lease_ended(self, link: HostLink, reason: str) -> None: ...


def _left(secs: float) -> str:
    mins = max(0, round(secs / 60))
    return f"{mins // 60}h{mins % 60:02d}m" if mins >= 60 else f"{mins}m"


def ask(fleet: FreshHost, link: HostLink, now: float) -> int:
    """Ask every agent on the node for its handoff note; how many were asked."""
    asked = 0
    for agent in [a for a in fleet.agents.values() if a.host == link.name]:
        try:
            path = handoff_path(fleet, agent)
        except SwarmError:
            continue  # a host without a state directory has nowhere to keep it
        text = HANDOFF_TEXT.format(
            lease=link.lease or "the node's lease", left=_left(link.lease_ends - now), path=path
        )
        fleet.send([agent.name], text, sender="swarm")
        asked += 1
    return asked


async def watch_leases(
    fleet: LeaseHost,
    links: list[HostLink],
    probe: LeaseProbe | None,
    check: float = CHECK,
    probe_every: float = PROBE_EVERY,
) -> None:
    """Handoff notes before each node's lease ends; and, with `probe`, the end of a job
    noticed (preempted, cancelled, out of time): its nodes' agents are lost."""
    probed = 0.0
    suspended: set[int] = set()  # jobs said to be suspended, until they run again
    while True:  # never returns: a supervised loop that came back would be started again
        now = time.time()
        for link in links:
            if (
                link.handoff_at
                and now >= link.handoff_at
                and not link.ended
                and not fleet.store.lease_asked(link.name, link.lease)
            ):
                fleet.store.mark_lease_asked(link.name, link.lease)  # once, across restarts
                n = ask(fleet, link, now)
                fleet.listener.notice(
                    f"{link.name}: {link.lease} ends in {_left(link.lease_ends - now)}: "
                    f"{n} agent{'s' * (n != 1)} asked for a handoff note"
                )
        if probe is not None and time.monotonic() - probed >= probe_every:
            probed = time.monotonic()
            for job in sorted({link.job for link in links if link.job and not link.ended}):
                why = await probe(job)
                held = [link.name for link in links if link.job == job]
                if why == JOB_SUSPENDED:
                    if job not in suspended:
                        suspended.add(job)
                        fleet.listener.notice(
                            f"Slurm job {job} is suspended until it resumes ({', '.join(held)})"
                        )
                    continue
                if job in suspended:
                    suspended.discard(job)
                    fleet.listener.notice(f"Slurm job {job} runs again ({', '.join(held)})")
                if why:
                    gone = [link for link in links if link.job == job and not link.ended]
                    for link in gone:
                        fleet.lease_ended(
                            link,
                            f"{link.lease} {why}: its agents here are "
                            "lost; what is queued for them waits for the next "
                            "allocation (`swarm up` asks for one)",
                        )
                    fleet.listener.notice(
                        f"Slurm job {job} {why}: {', '.join(link.name for link in gone)} lost"
                    )
        await asyncio.sleep(check)  # the wall clock and the job, looked at again
