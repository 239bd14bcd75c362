"""Everyone watching the fleet over the socket: a listener that fans the engine's changes out to
each attached watcher (UIs in terminals or browsers), in the protocol's words.

Each watcher gets what changed, coalesced: the latest view of each agent and the latest
screen of each agent it shows, never a backlog. Its writes go through its own task; one that
stops reading (a write not taken within `WRITE_WAIT`, or `MAX_EVENTS` behind) is dropped
without slowing the engine or the other watchers. The engine re-reads fast exactly
the agents some watcher shows.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.store import Message
from swarm_tui.protocol.models import (
    HEARTBEAT,
    AgentChanged,
    AgentView,
    Alive,
    Ended,
    GpuView,
    HostChanged,
    HostView,
    LayoutChanged,
    LayoutInvalid,
    MessageChanged,
    MessageView,
    Notice,
    NotifyView,
    ReminderView,
    Snapshot,
    TaskView,
    VerdictView,
    Work,
    WorkChanged,
    encode,
    encode_screen,
)

if TYPE_CHECKING:
    from swarm_tui.fleet.ports import Watched

MAX_EVENTS = 2000  # queued events a watcher may fall behind by before it is dropped
WRITE_WAIT = 10.0  # seconds one drain may take
WORK_EVERY = 1.0  # seconds between checks of tasks, verdicts and reminders
COUNTDOWN_SLACK = 1.5  # seconds a reminder's countdown may drift from the watchers' own
JUDGE_LOG = 60  # lines of the judge's log a snapshot carries
RECENT = 50  # messages a snapshot carries


def agent_view(agent: Agent) -> AgentView:
    return AgentView.model_validate(agent.summary())


def host_view(link: HostLink) -> HostView:
    gpus = (
        None
        if link.gpus is None
        else [
            GpuView(index=g.index, util=g.util, mem_used=g.mem_used, mem_total=g.mem_total)
            for g in link.gpus
        ]
    )
    return HostView(
        name=link.name,
        connected=link.connected,
        detail=link.detail,
        since=link.since,
        gpus=gpus,
        lease=link.lease,
        lease_ends=link.lease_ends,
    )


def work_of(fleet: Watched) -> Work:
    store = fleet.store
    tasks = [TaskView.model_validate(t, from_attributes=True) for t in store.tasks()]
    verdicts = [
        VerdictView(task=task, time=when, judge=who, verdict=verdict, reasons=why)
        for task, when, who, verdict, why in store.all_verdicts()
    ]
    reminders = [ReminderView.model_validate(r, from_attributes=True) for r in store.reminders()]
    countdowns = fleet.reminders.countdowns(list(fleet.agents.values()))
    return Work(
        tasks=tasks,
        verdicts=verdicts,
        reminders=reminders,
        countdowns=countdowns,
        judge_log=fleet.tasks.judge_log[-JUDGE_LOG:],
    )


def snapshot_of(
    fleet: Watched, problems: list[str] | None = None, partly: bool = False
) -> Snapshot:
    return Snapshot(
        fleet=fleet.name,
        layout_path=str(fleet.loaded.path),
        engine_pid=os.getpid(),
        agents=[agent_view(a) for a in fleet.agents.values()],
        hosts=[host_view(link) for link in fleet.links.values()],
        work=work_of(fleet),
        messages=[
            MessageView.model_validate(m, from_attributes=True)
            for m in fleet.store.messages(RECENT)
        ],
        layout_problems=problems or [],
        layout_partly=partly,
        notify=notify_view(fleet),
    )


def notify_view(fleet: Watched) -> NotifyView:
    spec = fleet.loaded.layout.notify
    return NotifyView(bell=list(spec.bell), every=spec.every)


class Watcher:
    """One attached watcher: what it shows, what it has not been sent yet."""

    def __init__(
        self, writer: asyncio.StreamWriter, visible: set[str], on_gone: Callable[[Watcher], None]
    ):
        self.writer = writer
        self.visible = visible
        self.sizes: dict[str, tuple[int, int]] = {}  # its tiles' sizes, by agent
        self.sized_at = 0.0  # when it last said them (the latest view's sizes win)
        self.on_gone = on_gone
        self.events: list[BaseModel] = []
        self.agents: dict[str, AgentView] = {}
        self.screens: dict[str, list[str]] = {}
        self.dirty = asyncio.Event()
        self.gone = False
        self.task = asyncio.create_task(self._write(), name="watcher")

    def push(self, event: BaseModel) -> None:
        if self.gone:
            return
        if len(self.events) >= MAX_EVENTS:
            self.drop()
            return
        self.events.append(event)
        self.dirty.set()

    def push_agent(self, view: AgentView) -> None:
        self.agents[view.name] = view
        self.dirty.set()

    def push_screen(self, name: str, lines: list[str]) -> None:
        self.screens[name] = lines
        self.dirty.set()

    async def _write(self) -> None:
        try:
            while not self.gone:
                await self.dirty.wait()
                self.dirty.clear()
                events, self.events = self.events, []
                agents, self.agents = self.agents, {}
                screens, self.screens = self.screens, {}
                data = b"".join(
                    [encode(e) for e in events]
                    + [encode(AgentChanged(agent=v)) for v in agents.values()]
                    + [encode_screen(n, lines) for n, lines in screens.items()]
                )
                if self.writer.is_closing():  # the view hung up (drain would have said)
                    break
                self.writer.write(data)
                if self.writer.transport.get_write_buffer_size():  # the view lags behind
                    await asyncio.wait_for(self.writer.drain(), WRITE_WAIT)
        except (OSError, ConnectionError, TimeoutError):
            pass
        finally:
            self.drop()

    def drop(self) -> None:
        if not self.gone:
            self.gone = True
            self.dirty.set()
            self.writer.close()
            self.on_gone(self)


class Watchers:
    """The fan-out: a FleetListener over every attached watcher."""

    def __init__(self, fleet: Watched):
        self.fleet = fleet
        self.all: list[Watcher] = []
        self._work: Work | None = None
        self._work_at = 0.0  # when it was sent (monotonic)
        self._work_task: asyncio.Task[None] | None = None
        self._problems: list[str] = []
        self._partly = False

    def add(self, writer: asyncio.StreamWriter, visible: set[str]) -> Watcher:
        watcher = Watcher(writer, visible, self._gone)
        self.all.append(watcher)
        snapshot = snapshot_of(self.fleet, self._problems, self._partly)
        watcher.push(snapshot)
        for name in visible:  # its screens at once, not at the next change
            agent = self.fleet.agents.get(name)
            if agent is not None and agent.screen:
                watcher.push_screen(name, list(agent.screen))
        self._visible_changed()
        if self._work_task is None:
            self._work_task = asyncio.create_task(self._watch_work(), name="watchers-work")
        return watcher

    def set_visible(
        self, watcher: Watcher, names: set[str], sizes: dict[str, tuple[int, int]] | None = None
    ) -> None:
        new = names - watcher.visible
        watcher.visible = names
        if sizes is not None and sizes != watcher.sizes:
            watcher.sizes, watcher.sized_at = sizes, time.monotonic()
        for name in new:
            agent = self.fleet.agents.get(name)
            if agent is not None and agent.screen:
                watcher.push_screen(name, list(agent.screen))
        self._visible_changed()

    def _gone(self, watcher: Watcher) -> None:
        if watcher in self.all:
            self.all.remove(watcher)
            self._visible_changed()

    def _visible_changed(self) -> None:
        shown: set[str] = set()
        sizes: dict[str, tuple[int, int]] = {}
        for watcher in sorted(self.all, key=lambda w: w.sized_at):
            shown |= watcher.visible
            sizes.update(watcher.sizes)  # kept while its screen is away (a human attached)
        self.fleet.set_visible(shown)
        self.fleet.set_sizes(sizes)

    def count(self) -> int:
        return len(self.all)

    async def _watch_work(self) -> None:
        """Tasks, verdicts and reminders change in many places: look once a second and send
        them whole when they did (countdowns alone are extrapolated by the watcher)."""
        alive_at = time.monotonic()
        while True:
            await asyncio.sleep(WORK_EVERY)
            if not self.all:
                continue
            if time.monotonic() - alive_at >= HEARTBEAT:
                alive_at = time.monotonic()
                self._push(Alive())
            try:
                work = work_of(self.fleet)
            except sqlite3.Error as exc:  # a journal hiccup must not end the loop
                self.notice(f"cannot read tasks for the watchers: {exc}")
                continue
            if (
                self._work is None
                or self._countdowns_moved(self._work, work)
                or work.model_copy(update={"countdowns": {}})
                != self._work.model_copy(update={"countdowns": {}})
            ):
                self._work, self._work_at = work, time.monotonic()
                self._push(WorkChanged(work=work))

    def _countdowns_moved(self, sent: Work, work: Work) -> bool:
        """Whether what the watchers extrapolate from the countdowns they were sent is off:
        a reminder fired, an agent went idle or stopped being idle (COUNTDOWN_SLACK spares
        the ticks of a countdown running as extrapolated)."""
        if sent.countdowns.keys() != work.countdowns.keys():
            return True
        gone = time.monotonic() - self._work_at
        return any(
            abs(max(0.0, sent.countdowns[name] - gone) - left) > COUNTDOWN_SLACK
            for name, left in work.countdowns.items()
        )

    def _push(self, event: BaseModel) -> None:
        for watcher in list(self.all):
            watcher.push(event)

    def end(self, reason: str, deliberate: bool) -> None:
        self._push(Ended(reason=reason, deliberate=deliberate))

    async def close(self) -> None:
        """Let every watcher have what it was sent, then hang up."""
        deadline = time.monotonic() + 2
        while (
            any(w.events or w.agents or w.screens for w in self.all) and time.monotonic() < deadline
        ):
            await asyncio.sleep(0.02)
        for watcher in list(self.all):
            watcher.drop()
        if self._work_task is not None:
            self._work_task.cancel()

    # ------------------------------------------------------------------ FleetListener
    def agent_changed(self, agent: Agent) -> None:
        if self.all:
            view = agent_view(agent)
            for watcher in self.all:
                watcher.push_agent(view)

    def screen_changed(self, agent: Agent) -> None:
        for watcher in self.all:
            if agent.name in watcher.visible:
                watcher.push_screen(agent.name, list(agent.screen))

    def message_changed(self, message: Message) -> None:
        if self.all:
            self._push(
                MessageChanged(message=MessageView.model_validate(message, from_attributes=True))
            )

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        link = self.fleet.links.get(host)
        if link is not None:
            self._push(HostChanged(host=host_view(link)))

    def notice(self, text: str) -> None:
        self._push(Notice(text=text))

    def layout_changed(self) -> None:
        self._problems, self._partly = [], False
        if self.all:
            self._push(LayoutChanged(snapshot=snapshot_of(self.fleet)))

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        self._problems, self._partly = list(problems), partly
        self._push(LayoutInvalid(problems=list(problems), partly=partly))
