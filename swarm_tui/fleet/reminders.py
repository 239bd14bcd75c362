"""Reminder timers: every N minutes, after N minutes idle (the stall watchdog), or at a time
of day; to one agent, a role, or all. Schedules live in SQLite, so they survive a restart.

A reminder is an ordinary message in the agent's queue, so it is typed only when the input
box is ready, never into a permission dialog. If the last one is still waiting there, the
next is not added: repeats that pile up while an agent is busy collapse into one. When its
turn to be typed comes, a reminder whose reason is gone is dropped (recorded as cancelled):
the stall it was about ended (the agent worked since), or every task of the agent is done.
The stall watchdog fires once per idle stretch, and again in the next one.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from swarm_tui.agents.base import AgentState
from swarm_tui.config.skills import skill_text
from swarm_tui.config.work import ReminderSpec, seconds
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.store import Message, NewReminder, Reminder, ReminderAction, ReminderKind

if TYPE_CHECKING:
    from swarm_tui.fleet.agent import Agent
    from swarm_tui.fleet.ports import ReminderHost

TICK = 5.0  # seconds: the longest a due reminder waits for the scheduler


def next_time_of_day(at: str, now: float) -> float:
    """The next wall-clock time HH:MM (local) after `now`."""
    hour, minute = (int(x) for x in at.split(":"))
    today = dt.datetime.fromtimestamp(now).replace(
        hour=hour, minute=minute, second=0, microsecond=0
    )
    when = today if today.timestamp() > now else today + dt.timedelta(days=1)
    return when.timestamp()


def new_reminder(spec: ReminderSpec, now: float) -> NewReminder:
    """A layout's or `swarm remind add`'s reminder as the journal takes it, first due after
    `now`."""
    kind = ReminderKind.EVERY if spec.every else ReminderKind.IDLE if spec.idle else ReminderKind.AT
    period = seconds(spec.every or spec.idle) if kind != ReminderKind.AT else 0.0
    due = (
        now + period
        if kind == ReminderKind.EVERY
        else next_time_of_day(spec.at, now)
        if kind == ReminderKind.AT
        else 0.0
    )
    return NewReminder(
        target=spec.to,
        kind=kind,
        period=period,
        at=spec.at,
        text=spec.text,
        skill=spec.skill,
        next_due=due,
        action=ReminderAction(spec.action),
    )


class Reminders:
    def __init__(self, fleet: ReminderHost, clock: Callable[[], float] = time.time):
        self.fleet = fleet
        self.store = fleet.store
        self.clock = clock
        self._idle_fired: dict[tuple[int, str], float] = {}  # (reminder, agent) -> idle since
        self._idle_since: dict[str, float] = {}

    def seed(self) -> None:
        now = self.clock()
        for i, spec in enumerate(self.fleet.loaded.layout.reminders):
            key = f"layout:{i}:{spec.model_dump_json()}"
            self.store.upsert_reminder(key, new_reminder(spec, now))

    def add(self, spec: ReminderSpec) -> int:
        self.targets(spec.to)  # unknown targets fail now, not at 3 am
        key = f"cli:{time.time_ns()}"
        return self.store.upsert_reminder(key, new_reminder(spec, self.clock()))

    def targets(self, to: str) -> list[Agent]:
        if to == "all":
            return list(self.fleet.agents.values())
        if to.startswith("role:"):
            return self.fleet.resolve([], role=to[5:])
        return self.fleet.resolve([to])

    # ------------------------------------------------------------------ state
    def state_changed(self, agent: Agent, new: AgentState) -> None:
        if new is AgentState.IDLE:
            self._idle_since.setdefault(agent.name, self.clock())
        elif new is not AgentState.UNREACHABLE:
            # a link outage ends no idle stretch: what the agent did meanwhile is unknown,
            # and back idle it is the same stall (never "went back to work")
            self._idle_since.pop(agent.name, None)

    def _all_done(self, agent: Agent) -> bool:
        """The agent had tasks and none is open: it is idle because it is finished."""
        tasks = self.store.tasks(agent.name)
        return bool(tasks) and self.fleet.tasks.current(agent.name) is None

    def obsolete(self, agent: Agent, message: Message) -> str:
        """Why a queued reminder should not be typed any more ("" to type it)."""
        if not message.sender.startswith("reminder:"):
            return ""
        rid = int(message.sender.split(":", 1)[1])
        row = self.store.reminder(rid)
        if row is None:
            return f"reminder #{rid} was removed"
        if row.paused:
            return f"reminder #{rid} is paused"
        if row.action != ReminderAction.FRESH and self._all_done(agent):
            return f"every task of {agent.name} is done"
        since = self._idle_since.get(agent.name)
        if row.kind == ReminderKind.IDLE and since is not None and since > message.created:
            # its idle stretch began after the reminder was written: the stall it was
            # about ended (the agent worked since)
            return f"{agent.name} went back to work after this stall reminder was queued"
        return ""

    def countdown(self, agent: Agent) -> float | None:
        """Seconds until the next reminder for this agent, if any is scheduled."""
        return self._countdown(agent, self.store.reminders(), self.clock())

    def countdowns(self, agents: list[Agent]) -> dict[str, float]:
        """`countdown` for many agents, reading the reminders once."""
        rows, now = self.store.reminders(), self.clock()
        out = {}
        for agent in agents:
            due = self._countdown(agent, rows, now)
            if due is not None:
                out[agent.name] = due
        return out

    def _countdown(self, agent: Agent, rows: list[Reminder], now: float) -> float | None:
        best: float | None = None
        for r in rows:
            if r.paused:
                continue
            try:
                if agent not in self.targets(r.target):
                    continue
            except SwarmError:
                continue
            if r.kind == ReminderKind.IDLE:
                since = self._idle_since.get(agent.name)
                if since is None or self._idle_fired.get((r.id, agent.name)) == since:
                    continue
                due = since + r.period
            else:
                due = r.next_due
            best = due - now if best is None else min(best, due - now)
        return None if best is None else max(0.0, best)

    # ------------------------------------------------------------------ firing
    def tick(self) -> list[tuple[int, str]]:
        """Fire what is due; returns (reminder id, agent) for each message queued."""
        now = self.clock()
        fired: list[tuple[int, str]] = []
        for r in self.store.reminders():
            if r.paused:
                continue
            rid = r.id
            try:
                agents = self.targets(r.target)
            except SwarmError:
                continue
            if r.kind == ReminderKind.IDLE:
                for agent in agents:
                    since = self._idle_since.get(agent.name)
                    if (
                        since is None
                        or now - since < r.period
                        or agent.state is AgentState.UNREACHABLE
                    ):
                        continue  # (unreachable: its stretch's reminder waits for it)
                    if self._idle_fired.get((rid, agent.name)) == since:
                        continue  # once per idle stretch
                    self._idle_fired[(rid, agent.name)] = since
                    fired += self._fire(r, [agent])
            elif now >= r.next_due:
                nxt = (
                    now + r.period if r.kind == ReminderKind.EVERY else next_time_of_day(r.at, now)
                )
                self.store.update_reminder(rid, next_due=nxt)
                fired += self._fire(r, agents)
        return fired

    def fire_now(self, rid: int) -> list[tuple[int, str]]:
        row = self._row(rid)
        return self._fire(row, self.targets(row.target))

    def _fire(self, r: Reminder, agents: list[Agent]) -> list[tuple[int, str]]:
        rid = r.id
        sender = f"reminder:{rid}"
        out = []
        for agent in agents:
            if agent.state in (AgentState.EXITED, AgentState.UNREACHABLE):
                continue
            if r.action != ReminderAction.FRESH and self._all_done(agent):
                continue  # finished: nothing to remind it of
            if r.action == ReminderAction.FRESH:
                self.fleet.fresh(agent.name)  # a scheduled fresh start
                out.append((rid, agent.name))
                continue
            waiting = [m for m in self.store.open_messages(agent.name) if m.sender == sender]
            if waiting:
                continue  # the last one has not been typed yet: collapse
            task = self.fleet.tasks.current(agent.name)
            values = {
                "agent": agent.name,
                "focus": agent.focus or "(none)",
                "task": task.spec.splitlines()[0] if task else agent.focus,
            }
            text = (
                skill_text(r.skill, values) if r.skill else skill_text("", values, fallback=r.text)
            )
            self.fleet.send([agent.name], text, sender=sender, task=task.id if task else 0)
            out.append((rid, agent.name))
        return out

    async def run(self) -> None:
        while True:
            self.tick()
            await asyncio.sleep(TICK)

    # ------------------------------------------------------------------ control
    def pause(self, rid: int, paused: bool) -> None:
        self._row(rid)
        self.store.update_reminder(rid, paused=paused)

    def snooze(self, rid: int, secs: float) -> None:
        row = self._row(rid)
        due = max(row.next_due, self.clock()) + secs
        self.store.update_reminder(rid, next_due=due)

    def remove(self, rid: int) -> None:
        self._row(rid)
        self.store.delete_reminder(rid)

    def edit(self, rid: int, text: str) -> None:
        self._row(rid)
        self.store.update_reminder(rid, text=text, skill="")

    def _row(self, rid: int) -> Reminder:
        row = self.store.reminder(rid)
        if row is None:
            raise SwarmError(f"no reminder #{rid} (see `swarm remind list`)")
        return row
