"""Stalls: an agent with a task to work on (pending, in progress, or sent back by its judge)
that has sat idle for `[notify] stall_after`, or worked that long with no new output, is
marked stalled (views show it and ring) and alerted once; again only after it moved (new
output, a new state) and stalled again. A worker waiting for its judge is not stalled.

The stall reminder (`idle = "10m"`) wakes the agent itself; this tells the human."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from swarm_tui.config.notify import Kind, NotifySpec, stall_reason, stall_text
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.store import Task, TaskStatus

TICK = 5.0  # seconds between looks
# the tasks whose agent should be at work: not one it claimed done, waiting for its judge
# (a slow judge is not the worker's stall)
WORKER_TASK = frozenset({TaskStatus.PENDING, TaskStatus.IN_PROGRESS, TaskStatus.INCOMPLETE})


class Tasks(Protocol):
    def tasks(self, agent: str | None = None) -> list[Task]: ...


class StallWatch:
    """Looks at every agent each `TICK`; `clock` is the trackers' (monotonic) clock."""

    def __init__(
        self,
        agents: Callable[[], Iterable[Agent]],
        store: Tasks,
        spec: Callable[[], NotifySpec],
        listener: Callable[[], FleetListener],
        alert: Callable[[Kind, str, str], None],
        clock: Callable[[], float] = time.monotonic,
    ):
        self._agents, self._store, self._spec = agents, store, spec
        self._listener, self._alert, self._clock = listener, alert, clock

    def tick(self) -> list[str]:
        """Mark who stalled or moved on; alert each new stall. Returns the new stalls."""
        after = self._spec().stall_seconds
        now = self._clock()
        open_tasks: dict[str, str] = {}
        for task in self._store.tasks():
            if task.status in WORKER_TASK and task.agent not in open_tasks:
                open_tasks[task.agent] = task.spec
        stalled = []
        for agent in self._agents():
            tracker = agent.tracker
            reason = stall_reason(
                agent.state.value,
                now - tracker.since,
                now - tracker.last_output,
                open_tasks.get(agent.name),
                after,
            )
            if bool(reason) == bool(agent.stalled):
                continue  # still stalled (its clock goes on: no news) or still fine
            agent.stalled = reason
            self._listener().agent_changed(agent)
            if reason:
                stalled.append(agent.name)
                self._alert("stall", agent.name, stall_text(agent.name, reason))
        return stalled

    async def run(self) -> None:
        while True:
            self.tick()
            await asyncio.sleep(TICK)
