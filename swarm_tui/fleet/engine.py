"""The engine: one fleet across its hosts, each watched through one control-mode client.

`%output` is a doorbell: it marks the agent's pane dirty. Dirty panes are re-read with
`capture-pane` down the same channel at a capped rate: fast for tiles on screen, slow for the
rest (their state still shows in the sidebar). Nothing is read while nothing changes. A host
whose link drops is reconnected with backoff and every pane resynced; the others go on
(fleet/links.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial

from swarm_tui.agents import adapter_for
from swarm_tui.agents.base import AgentState
from swarm_tui.config.hosts import LOCAL
from swarm_tui.config.layout import LoadedLayout
from swarm_tui.errors import AgentNotFound, HostUnreachable, SwarmError, TmuxError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.comeback import came_back, lost_reason, requeue, settle_gone
from swarm_tui.fleet.events import FleetListener, NullListener
from swarm_tui.fleet.identity import Senders, local_panes
from swarm_tui.fleet.injection import HUMAN, Injector
from swarm_tui.fleet.lease import PROBE_EVERY, LeaseProbe, watch_leases
from swarm_tui.fleet.link import HostLink, watch_gpus
from swarm_tui.fleet.links import HostLinks, launch_line
from swarm_tui.fleet.notify import Notifier
from swarm_tui.fleet.reminders import Reminders
from swarm_tui.fleet.screens import ScreenReader
from swarm_tui.fleet.sizes import WindowSizer
from swarm_tui.fleet.stalls import StallWatch
from swarm_tui.fleet.store import Message, Store
from swarm_tui.fleet.supervise import supervised
from swarm_tui.fleet.tasks import TaskBoard
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.fleet.worktrees import Worktrees
from swarm_tui.hosts.base import Host
from swarm_tui.hosts.registry import make_hosts
from swarm_tui.tmux.client import ControlClient
from swarm_tui.tmux.commands import quote, sanitize

GPU_INTERVAL = 5.0  # seconds between nvidia-smi readings per host


class Fleet:
    """A running fleet: start (or re-attach), watch, inject, stop watching."""

    def __init__(
        self,
        loaded: LoadedLayout,
        store: Store,
        listener: FleetListener | None = None,
        hosts: dict[str, Host] | None = None,
        lease_probe: LeaseProbe | None = None,
    ):
        self.loaded = loaded
        self.lease_probe = lease_probe  # whether a job holding nodes still runs
        self.lease_probe_every = PROBE_EVERY
        self.name = loaded.fleet
        self.store = store
        self.listener: FleetListener = listener or NullListener()
        table = loaded.layout.host_table()
        self.links = {k: HostLink(k, h) for k, h in (hosts or make_hosts(loaded)).items()}
        for key, link in self.links.items():
            if key in table:  # a node held by a lease (a Slurm job): until when
                node = table[key]
                link.lease, link.lease_ends, link.handoff_at, link.job = (
                    node.lease,
                    node.lease_ends,
                    node.handoff_at,
                    node.job,
                )
        self.agents: dict[str, Agent] = {}
        self.senders = Senders(self.agents, store.agent_for_token, self._local_panes)
        self._tasks: set[asyncio.Task[None]] = set()
        self.screens = ScreenReader(self.agents, self.links, lambda: self.listener, self._evaluate)
        self._injector = Injector(
            store,
            self.control_for,
            self.capture,
            self._message_queued,
            self.reachable,
            self._typed,
            self._obsolete,
            lambda text: self.listener.notice(text),
        )
        self.ended = asyncio.Event()  # set when the fleet's tmux sessions are gone for good
        self.end_reason = ""
        self._resumed = False  # the journal's open messages are queued (see `send`)
        self.ready = False  # every host brought up (or retrying), the journal resumed
        self.created: list[str] = []  # agents this start created (the rest were re-attached)
        self.started_at = time.time()
        self.deliberate_end = False  # ended by `swarm down`, not by tmux dying
        self.tasks = TaskBoard(self)
        self.reminders = Reminders(self)
        self.sizer = WindowSizer(self.agents, self.links)
        self.host_links = HostLinks(self.links, self, self.screens, self.sizer, self._spawn)
        self.notifier = Notifier(
            loaded.fleet, lambda: self.loaded.layout.notify, lambda line: self.listener.notice(line)
        )
        self.stalls = StallWatch(
            lambda: self.agents.values(),
            self.store,
            lambda: self.loaded.layout.notify,
            lambda: self.listener,
            self.notifier.alert,
        )
        self.worktrees = Worktrees(
            self.name,
            lambda agent: self.link_of(agent).host,
            lambda agent: self.listener.agent_changed(agent),
            lambda line: self.listener.notice(line),
            lambda: self.agents.values(),
        )
        now = time.monotonic()
        for spec in loaded.agents():
            adapter = adapter_for(spec.cli)
            self.agents[spec.name] = Agent(
                spec=spec,
                adapter=adapter,
                token=store.token_for(spec.name),
                focus=store.focus(spec.name) or spec.focus,
                tracker=StateTracker(adapter, started=now),
                session=store.session(spec.name),
            )

    @property
    def host(self) -> Host:
        """The first host (the local machine when the fleet uses it)."""
        return next(iter(self.links.values())).host

    @property
    def connected(self) -> bool:
        return all(link.connected for link in self.links.values())

    def link_of(self, agent: Agent) -> HostLink:
        return self.links[agent.spec.host]

    def control_for(self, agent: Agent) -> ControlClient:
        link = self.link_of(agent)
        if not link.connected or link.control is None:
            raise TmuxError(f"{link.name}: tmux link is down ({link.detail or 'connecting'})")
        return link.control

    def reachable(self, agent: Agent) -> bool:
        return self.link_of(agent).connected and bool(agent.pane)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Bring every host up at once; a remote host that fails keeps retrying in the
        background while the rest work. A local failure (tmux missing) raises."""
        await self.host_links.start()
        self._spawn(self._supervised(self.screens.run, "screen reader"), "fleet-refresh")
        self._spawn(self._supervised(self.notifier.run, "alerts"), "notify")
        self._spawn(self._supervised(self.stalls.run, "stall watch"), "stalls")
        self._spawn(self._supervised(self.sizer.run, "window sizes"), "window-sizes")
        for link in self.links.values():
            self._spawn(
                self._supervised(
                    partial(watch_gpus, link, GPU_INTERVAL),
                    f"GPU readings of {link.name}",
                    may_end=True,
                ),
                f"gpus-{link.name}",
            )
        leased = [link for link in self.links.values() if link.lease]
        if leased:  # nodes of a Slurm job: handoffs before its time limit, its end noticed
            self._spawn(
                self._supervised(
                    partial(
                        watch_leases,
                        self,
                        leased,
                        self.lease_probe,
                        probe_every=self.lease_probe_every,
                    ),
                    "lease watch",
                ),
                "leases",
            )
        for agent in self.agents.values():
            self._injector.start(agent)
        self._resume_journal()
        back = [self.agents[n] for n in self.created if self.agents[n].resumed]
        if back:  # its tmux died with the engine: the journal knew their conversations
            self._spawn(came_back(self, back), "came-back")
        self.tasks.seed()
        self.reminders.seed()
        self._spawn(self._supervised(self.reminders.run, "reminders"), "reminders")
        self._spawn(self._supervised(self.tasks.run, "tasks"), "tasks")
        for name in self.created:
            agent = self.agents[name]
            if agent.spec.prompt and not agent.resumed:
                self.send([name], agent.spec.prompt, sender="swarm")
        self.ready = True

    # ------------------------------------------------------- agents started again
    def windows_lost(self, link: HostLink, agents: list[Agent]) -> None:
        self._spawn(came_back(self, agents, f" on {link.name}"), f"came-back-{link.name}")

    def host_of(self, agent: Agent) -> Host:
        return self.link_of(agent).host

    def send_first(self, agent: Agent, text: str) -> None:
        (message,) = self.store.enqueue_all("swarm", [agent.name], sanitize(text), 0)
        self._injector.enqueue_first(agent, message)

    def notice(self, text: str) -> None:
        self.listener.notice(text)

    def _spawn(self, coro: object, name: str) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coro, name=name)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._task_ended)

    def _task_ended(self, task: asyncio.Task[None]) -> None:
        """A task of the engine ended: forgotten (a night of reconnects adds up), and said
        if it failed, never silently."""
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.listener.notice(f"{task.get_name()} failed ({exc!r})")

    async def _supervised(
        self, loop: Callable[[], Awaitable[None]], name: str, may_end: bool = False
    ) -> None:
        """Run a loop that must never stop: when it fails it is restarted, and said so."""
        await supervised(loop, name, lambda text: self.listener.notice(text), may_end)

    async def stop(self) -> None:
        """Stop watching; the agents keep running in tmux."""
        self.host_links.stopping = True
        for task in list(self._tasks):
            task.cancel()
        try:  # a task that ignores cancellation must not hold the fleet open
            await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 10)
        except TimeoutError:
            pass
        self._tasks.clear()
        await self._injector.stop()
        await self.tasks.stop()
        await self.worktrees.stop()
        for link in self.links.values():
            try:  # a link that died silently must not hold up the others
                if link.control is not None:
                    await asyncio.wait_for(link.control.close(), 5)
                await asyncio.wait_for(link.host.close(), 5)
            except TimeoutError:
                pass
            link.connected = False

    async def down(self) -> None:
        """Stop every agent: kill the fleet's tmux servers; settle the journal (nothing
        queued is typed into the next run's new agents)."""
        await self.stop()
        self.store.settle_down("the fleet was stopped (swarm down) before it was typed")
        self.store.forget_sessions()  # the next start begins new conversations

        async def kill(link: HostLink) -> None:
            try:
                if link.name != LOCAL:
                    await link.host.connect()
                await link.host.kill_server()
            finally:
                await link.host.close()

        for link in self.links.values():
            try:
                await asyncio.wait_for(kill(link), 60)
            except (SwarmError, TimeoutError):
                pass

    async def create_window(self, link: HostLink, agent: Agent) -> bool:
        """A window for an agent added while the fleet runs (see `HostLinks.create_window`)."""
        return await self.host_links.create_window(link, agent)

    def add_agent(self, agent: Agent) -> None:
        """An agent joins the running fleet (live reload): its queue starts, resuming what
        the journal still holds for its name (it may have left and come back)."""
        self.agents[agent.name] = agent
        self._injector.start(agent)
        self._resume(agent)

    def remove_agent(self, agent: Agent) -> None:
        """An agent leaves the fleet view (live reload); its window and journal rows stay."""
        self._injector.forget(agent)
        self.agents.pop(agent.name, None)
        self.link_of(agent).by_pane.pop(agent.pane, None)

    def watch(self) -> None:
        """Follow edits of the layout file (live reload)."""
        from swarm_tui.fleet.reload import watch_layout

        starts = 0

        async def watching() -> None:
            nonlocal starts
            starts += 1  # started again after a failure: an edit made meanwhile is applied
            await watch_layout(self, self.loaded.path, catch_up=starts > 1)

        self._spawn(self._supervised(watching, "the layout's watcher"), "layout-watch")

    def agent_env(self, agent: Agent, host: Host) -> dict[str, str]:
        ctx = host.launch_context()
        return {
            **agent.spec.env,
            "SWARM_AGENT": agent.name,
            "SWARM_TOKEN": agent.token,
            "SWARM_FLEET": self.name,
            "SWARM_HOST": host.name,
            "SWARM_SOCKET": ctx.socket,
        }

    def _resume_journal(self) -> None:
        """Queue what the journal holds undelivered, in the order it was written: a previous
        run's messages, and what was sent while this one was starting."""
        for agent in self.agents.values():
            if agent.name in self.created and not agent.resumed:
                settle_gone(self.store, self.listener, agent, self.started_at)
            self._resume(agent)
        self._resumed = True

    def _resume(self, agent: Agent) -> None:
        requeue(self.store, self.listener, agent, self._injector.enqueue)

    # ------------------------------------------------------------------ links
    async def prepare_worktrees(
        self, link: HostLink, create: bool, only: Agent | None = None, checked: bool = False
    ) -> None:
        """Check (or make) the worktrees of a host's agents before their windows."""
        mine = (
            [only]
            if only is not None
            else [a for a in self.agents.values() if a.spec.host == link.name]
        )
        await self.worktrees.prepare(link.host, mine, create, checked)

    def tmux_lost(self) -> None:
        """The local tmux server's session is gone: the fleet was stopped; end it."""
        self._end(lost_reason(self.store, self.listener, self.agents.values(), self.name))

    def link_state(self, link: HostLink, up: bool, detail: str) -> None:
        """A host's link went down or came back: its agents are unreachable meanwhile (what
        they do is unknown: never shown as idle, never typed into)."""
        link.set_state(up, detail)
        self.listener.host_changed(link.name, up, detail)
        if not up:
            self.notifier.alert("host", link.name, f"host {link.name} is down: {detail}")
        now = time.monotonic()
        mine = [a for a in self.agents.values() if a.spec.host == link.name]
        for agent in mine:
            agent.tracker.unreachable = not up
        self._evaluate(now, mine)

    def lease_ended(self, link: HostLink, reason: str) -> None:
        """The job holding a node ended (preempted, cancelled, out of time): its agents are
        lost, never restarted there; what is queued for them stays queued."""
        link.ended = reason
        self.link_state(link, False, reason)
        self._spawn(link.host.close(), f"close-{link.name}")

    def end(self, reason: str) -> None:
        """Tell whoever owns the fleet to stop watching (the agents are being stopped)."""
        self.deliberate_end = True
        self.notifier.muted = True  # `swarm down` stops them all: no alert for each
        self._end(reason)

    def _end(self, reason: str) -> None:
        self.end_reason = reason
        for agent in self.agents.values():
            agent.tracker.pane_died(True)
        self._evaluate(time.monotonic())
        self.ended.set()

    # ------------------------------------------------------------------ screens
    def set_visible(self, names: set[str]) -> None:
        """Which agents have a tile on screen (they are re-read fast)."""
        self.screens.set_visible(names)

    def set_sizes(self, sizes: dict[str, tuple[int, int]]) -> None:
        """The size of each shown agent's tile: its window is made that size."""
        self.sizer.want(sizes)

    async def change_for_judge(self, agent: Agent) -> str:
        return await self.worktrees.for_judge(agent)

    async def capture(self, agent: Agent) -> list[str]:
        """Re-read one agent's screen now; returns its plain lines."""
        return await self.screens.capture(agent)

    def _evaluate(self, now: float, agents: list[Agent] | None = None) -> None:
        for agent in self.agents.values() if agents is None else agents:
            old = agent.state
            if agent.tracker.evaluate(now):
                self._state_changed(agent, old)
            elif agent.pending and agent.tracker.ready_at(now):
                agent.changed.set()  # the box became ready with no change of state
            if agent.state is AgentState.NEEDS_PERMISSION:
                self._asks(agent)

    def _asks(self, agent: Agent) -> None:
        """A dialog that follows another (the state stays) still reaches the views: a human
        must see, and answer, the question on the screen now."""
        r = agent.tracker.reading
        if r.state is AgentState.NEEDS_PERMISSION and (r.question, r.options) != agent.asked:
            agent.asked = (r.question, r.options)
            self.listener.agent_changed(agent)

    def _state_changed(self, agent: Agent, old: AgentState) -> None:
        """The one path every change of state takes, whatever caused it (a screen, quiet
        time, a hook, a delivery): the queue, the sidebar, reminders and tasks all hear it."""
        agent.changed.set()
        if agent.state is AgentState.WORKING:
            agent.worked_at = time.time()
        self.listener.agent_changed(agent)
        if agent.state is AgentState.NEEDS_PERMISSION:
            asks = agent.tracker.reading.question
            agent.asked = (asks, agent.tracker.reading.options)
            self.notifier.alert(
                "permission", agent.name, f"{agent.name} needs you" + (f": {asks}" if asks else "")
            )
        elif agent.state is AgentState.EXITED:
            self.notifier.alert("exited", agent.name, f"{agent.name} exited")
        if agent.state in (AgentState.IDLE, AgentState.EXITED):
            self.worktrees.refresh(agent)  # its change as it left it (never polled)
        self.reminders.state_changed(agent, agent.state)
        self.tasks.state_changed(agent, old, agent.state)

    def _typed(self, agent: Agent) -> None:
        """A message was submitted: the agent is busy until its screen says otherwise."""
        old = agent.state
        self.screens.unmute(agent)  # its answer is followed closely
        agent.tracker.typed(time.monotonic())
        if agent.state is not old:
            self._state_changed(agent, old)
        self.screens.wake.set()

    def _obsolete(self, agent: Agent, message: Message) -> str:
        """Why a queued message should no longer be typed ("" to type it)."""
        return self.tasks.obsolete(agent, message) or self.reminders.obsolete(agent, message)

    # ------------------------------------------------------------------ commands
    def resolve(
        self,
        names: list[str],
        all_agents: bool = False,
        role: str | None = None,
        exclude: str | None = None,
    ) -> list[Agent]:
        """Agents named (case-insensitive), or all, or all with a role; unknown names raise."""
        if all_agents or role:
            out = [
                a
                for a in self.agents.values()
                if (all_agents or a.role == role) and a.name != exclude
            ]
            if not out:
                what = f"role {role!r}" if role else "this fleet"
                raise AgentNotFound(f"no agents with {what} (roles: {self.roles()})")
            return out
        by_key = {a.name.casefold(): a for a in self.agents.values()}
        out = []
        for n in names:
            agent = by_key.get(n.casefold())
            if agent is None:
                raise AgentNotFound(f"no agent named {n!r} in fleet {self.name!r} (see `swarm ls`)")
            out.append(agent)
        return out

    def roles(self) -> str:
        return ", ".join(sorted({a.role for a in self.agents.values()}))

    def send(
        self, names: list[str], text: str, sender: str = HUMAN, task: int = 0
    ) -> list[Message]:
        """Journal a message for each recipient and queue it; returns the journal rows.
        `task`: the task the message is about (it is dropped if that task is over)."""
        clean = sanitize(text)
        if not clean.strip():
            raise SwarmError("empty message: nothing to send")
        agents = self.resolve(names)
        out = self.store.enqueue_all(sender, [a.name for a in agents], clean, task)
        for agent, message in zip(agents, out, strict=True):
            if self._resumed:  # until then the journal's resume queues it, in order
                self._injector.enqueue(agent, message)
        return out

    def set_focus(self, name: str, label: str, by: str = HUMAN) -> Agent:
        (agent,) = self.resolve([name])
        agent.focus = " ".join(sanitize(label).split())[:120]
        self.store.set_focus(agent.name, agent.focus, by)
        self.listener.agent_changed(agent)
        return agent

    def fresh(self, name: str, handoff: bool = True) -> Agent:
        """Start a fresh start of an agent in the background (handoff, clear, re-inject)."""
        from swarm_tui.fleet.fresh import fresh_start

        (agent,) = self.resolve([name])

        async def run() -> None:
            try:
                await fresh_start(self, agent, handoff)
            except SwarmError as exc:
                self.listener.notice(str(exc))

        self._spawn(run(), f"fresh-{agent.name}")
        return agent

    async def restart(self, agent: Agent) -> None:
        """Restart the agent's CLI in its own window (same pane, same name)."""
        link = self.link_of(agent)
        control = self.control_for(agent)
        command = launch_line(agent, link.host.launch_context())
        now = time.monotonic()
        agent.tracker = StateTracker(agent.adapter, started=now)
        cwd = f"-c {quote(agent.cwd)} " if agent.cwd else ""
        await control.run(f"respawn-pane -k -t {agent.pane} {cwd}{quote(command)}")
        self.screens.mark(agent)

    def hook(self, name: str, payload: dict[str, object]) -> str | None:
        """A structured signal from an agent's CLI (its hooks / notify program)."""
        (agent,) = self.resolve([name])
        session = agent.adapter.session_id(payload)
        if session and session != agent.session:  # the conversation a reboot resumes
            agent.session = session
            self.store.set_session(agent.name, session)
        state = agent.adapter.hook_state(payload)
        if state is not None and state is not AgentState.WORKING:
            self.screens.unmute(agent)  # a turn ends or asks: its screen matters now
        if state is not None and state is not agent.state:
            old = agent.state
            agent.tracker.signalled(state, time.monotonic())
            self._state_changed(agent, old)
            self.screens.wake.set()
        return state.value if state else None

    def attach_argv(self, name: str) -> list[str]:
        (agent,) = self.resolve([name])
        if not agent.window:
            return []
        self.sizer.hand_over(agent)  # the human's terminal sizes the window meanwhile
        return self.link_of(agent).host.attach_argv(agent.window)

    def _message_queued(self, message: Message, agent: Agent) -> None:
        self.listener.message_changed(message)
        if message.task:
            self.tasks.message_settled(agent, message)
        self.listener.agent_changed(agent)
        self.screens.wake.set()  # a delivery changes what the state should be: re-evaluate

    async def sender_for(
        self,
        token: str | None,
        pid: int | None,
        node: tuple[str, str] | None = None,
        proven: bool = False,
    ) -> str:
        """Who sent a request (see `Senders.sender_for`)."""
        return await self.senders.sender_for(token, pid, node, proven)

    async def _local_panes(self) -> dict[str, str] | None:
        return await local_panes(self.links.get(LOCAL))

    def states(self) -> dict[str, AgentState]:
        return {a.name: a.state for a in self.agents.values()}


__all__ = ["Fleet", "HostUnreachable"]
