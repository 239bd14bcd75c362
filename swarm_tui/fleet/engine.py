"""The engine: one fleet on one tmux server, watched through one control-mode client.

`%output` is a doorbell: it marks the agent's pane dirty. Dirty panes are re-read with
`capture-pane` down the same channel at a capped rate: fast for tiles on screen, slow for the
rest (their state still shows in the sidebar). Nothing is read while nothing changes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from swarm_tui.agents import adapter_for
from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import LoadedLayout
from swarm_tui.errors import AgentNotFound, SwarmError, TmuxError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener, NullListener
from swarm_tui.fleet.injection import HUMAN, Injector
from swarm_tui.fleet.store import SENDING, UNCERTAIN, Message, Store
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.hosts.local import LocalHost, check_tmux
from swarm_tui.paths import socket_path, tmux_socket_name
from swarm_tui.tmux.client import ControlClient
from swarm_tui.tmux.commands import quote, sanitize
from swarm_tui.tmux.protocol import Event, Exit, Output, Pause, SubscriptionChanged, WindowClose

VISIBLE_INTERVAL = 0.05  # seconds between captures of a tile on screen
HIDDEN_INTERVAL = 1.0  # seconds between captures of an agent off screen
COALESCE = 0.008  # seconds to gather a burst of %output before one round of captures
DEAD_SUB = "swarm-dead"


class Fleet:
    """A running fleet: start (or re-attach), watch, inject, stop watching."""

    def __init__(self, loaded: LoadedLayout, store: Store, listener: FleetListener | None = None):
        self.loaded = loaded
        self.name = loaded.fleet
        self.store = store
        self.listener: FleetListener = listener or NullListener()
        self.host = LocalHost(tmux_socket_name(self.name), self.name)
        self.agents: dict[str, Agent] = {}
        self._by_pane: dict[str, Agent] = {}
        self._control: ControlClient | None = None
        self._visible: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._injector = Injector(store, self.control, self.capture, self._message_queued)
        self.connected = False
        self.ended = asyncio.Event()  # set when the fleet's tmux session is gone for good
        self.end_reason = ""
        self._stopping = False
        self.created: list[str] = []  # agents this start created (the rest were re-attached)

    # ------------------------------------------------------------------ lifecycle
    def control(self) -> ControlClient:
        if self._control is None or self._control.closed.is_set():
            raise TmuxError(f"fleet {self.name!r}: tmux server is not connected")
        return self._control

    async def start(self) -> None:
        check_tmux()
        specs = self.loaded.agents()
        await self.host.ensure_session(str(self.loaded.path.parent.resolve()))
        self._control = await self.host.open_control(self._on_event)
        self.connected = True
        control = self._control
        await control.run(f"refresh-client -B {quote(DEAD_SUB + ':%*:#{pane_dead}')}")
        existing = await self._windows()
        now = time.monotonic()
        for spec in specs:
            focus = self.store.focus(spec.name) or spec.focus
            agent = Agent(spec=spec, adapter=adapter_for(spec.cli),
                          token=self.store.token_for(spec.name), focus=focus,
                          tracker=StateTracker(adapter_for(spec.cli), started=now))
            self.agents[spec.name] = agent
            if spec.name in existing:
                agent.window, agent.pane, dead = existing[spec.name]
                agent.tracker.pane_died(dead)
            else:
                await self._create_window(agent)
                self.created.append(spec.name)
            self._by_pane[agent.pane] = agent
        await self._refresh(list(self.agents.values()))
        self._tasks.append(asyncio.create_task(self._refresh_loop(), name="fleet-refresh"))
        for agent in self.agents.values():
            self._injector.start(agent)
        self._resume_journal()
        for name in self.created:
            agent = self.agents[name]
            if agent.spec.prompt:
                self.send([name], agent.spec.prompt, sender="swarm")

    async def stop(self) -> None:
        """Stop watching; the agents keep running in tmux."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self._injector.stop()
        if self._control is not None:
            await self._control.close()
        await self.host.close()
        self.connected = False

    async def down(self) -> None:
        """Stop every agent: kill the fleet's tmux server."""
        await self.stop()
        await self.host.kill_server()

    async def _windows(self) -> dict[str, tuple[str, str, bool]]:
        reply = await self.control().run(
            f"list-windows -t ={self.host.session} -F "
            + quote("#{window_id}\t#{pane_id}\t#{pane_dead}\t#{@swarm_agent}"))
        found = {}
        for line in reply.text().splitlines():
            parts = line.split("\t")
            if len(parts) == 4 and parts[3]:
                found[parts[3]] = (parts[0], parts[1], parts[2] == "1")
        return found

    def agent_env(self, agent: Agent) -> dict[str, str]:
        bindir = str(Path(sys.executable).parent)
        path = os.environ.get("PATH", "")
        return {
            **agent.spec.env,
            "SWARM_AGENT": agent.name,
            "SWARM_TOKEN": agent.token,
            "SWARM_FLEET": self.name,
            "SWARM_SOCKET": str(socket_path(self.name)),
            "PATH": bindir if not path else f"{bindir}:{path}",
        }

    async def _create_window(self, agent: Agent) -> None:
        spec = agent.spec
        env = " ".join(f"-e {quote(f'{k}={v}')}" for k, v in self.agent_env(agent).items())
        cwd = spec.cwd if os.path.isdir(spec.cwd) else str(self.loaded.path.parent.resolve())
        reply = await self.control().run(
            f"new-window -d -P -F {quote('#{window_id} #{pane_id}')} -t ={self.host.session}: "
            f"-n {quote(spec.name)} -c {quote(cwd)} {env} {quote(agent.adapter.launch(spec))}"
        )
        agent.window, agent.pane = reply.text().split()
        await self.control().run(
            f"set-option -w -t {agent.window} @swarm_agent {quote(spec.name)}")

    def _resume_journal(self) -> None:
        """Re-queue what a previous run journaled but did not deliver."""
        for agent in self.agents.values():
            for message in self.store.open_messages(agent.name):
                if message.status == SENDING:
                    # it may have been typed before the crash: never type it twice
                    self.store.mark(message.id, UNCERTAIN, "swarm stopped while typing it")
                    continue
                self._injector.enqueue(agent, message)

    # ------------------------------------------------------------------ events
    def _on_event(self, event: Event) -> None:
        if isinstance(event, Output):
            agent = self._by_pane.get(event.pane)
            if agent is not None:
                agent.tracker.output(time.monotonic())
                agent.last_output_wall = time.time()
                agent.dirty = True
                self._wake.set()
        elif isinstance(event, Pause):
            agent = self._by_pane.get(event.pane)
            if agent is not None:
                agent.paused = agent.dirty = True
                self._wake.set()
        elif isinstance(event, SubscriptionChanged) and event.name == DEAD_SUB:
            agent = self._by_pane.get(event.pane)
            if agent is not None:
                agent.tracker.pane_died(event.value.strip() == "1")
                agent.dirty = True
                self._wake.set()
        elif isinstance(event, WindowClose):
            for agent in self.agents.values():
                if agent.window == event.window:
                    agent.tracker.pane_died(True)
                    self._by_pane.pop(agent.pane, None)
                    agent.pane = ""
                    self._wake.set()
        elif isinstance(event, Exit) and self.connected:
            self.connected = False
            if not self._stopping:
                self.listener.host_changed(False, event.reason or "tmux server exited")
                self._tasks.append(asyncio.create_task(self._reconnect(), name="reconnect"))

    async def _reconnect(self) -> None:
        """Re-attach after the control client dropped; end the fleet if its session is gone."""
        delay = 0.2
        while not self._stopping:
            try:
                if not await self.host.session_exists():
                    self._end(f"fleet {self.name!r} stopped: its tmux session is gone")
                    return
                self._control = await self.host.open_control(self._on_event)
                await self._control.run(
                    f"refresh-client -B {quote(DEAD_SUB + ':%*:#{pane_dead}')}")
                existing = await self._windows()
            except SwarmError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self.connected = True
            self._by_pane.clear()
            for agent in self.agents.values():
                agent.window, agent.pane, dead = existing.get(agent.name, ("", "", True))
                agent.tracker.pane_died(dead)
                agent.dirty = True
                if agent.pane:
                    self._by_pane[agent.pane] = agent
            self.listener.host_changed(True, "re-attached")
            self._wake.set()
            return

    def _end(self, reason: str) -> None:
        self.end_reason = reason
        for agent in self.agents.values():
            agent.tracker.pane_died(True)
        self._evaluate(time.monotonic())
        self.ended.set()

    # ------------------------------------------------------------------ screens
    def set_visible(self, names: set[str]) -> None:
        """Which agents have a tile on screen (they are re-read fast)."""
        newly = names - self._visible
        self._visible = set(names)
        for name in newly:
            if name in self.agents:
                self.agents[name].dirty = True
        self._wake.set()

    def _interval(self, agent: Agent) -> float:
        return VISIBLE_INTERVAL if agent.name in self._visible else HIDDEN_INTERVAL

    async def capture(self, agent: Agent) -> list[str]:
        """Re-read one agent's screen now; returns its plain lines."""
        await self._refresh([agent])
        return agent.plain_screen()

    async def _refresh(self, agents: list[Agent]) -> None:
        agents = [a for a in agents if a.pane]
        if not agents or not self.connected:
            return
        lines = [f"capture-pane -p -e -N -t {a.pane}" for a in agents]
        futures = await self.control().send(lines)
        now = time.monotonic()
        continues = []
        for agent, fut in zip(agents, futures, strict=True):
            reply = await fut
            agent.last_capture = now
            agent.dirty = False
            if not reply.ok:
                continue
            agent.screen = [ln.decode("utf-8", "replace") for ln in reply.lines]
            if agent.adapter.reads_screen:
                agent.tracker.screen(agent.adapter.read(agent.plain_screen()))
            if agent.paused:
                agent.paused = False
                continues.append(f"refresh-client -A {quote(agent.pane + ':continue')}")
            if agent.name in self._visible:
                self.listener.screen_changed(agent)
        if continues:
            await self.control().send(continues)
        self._evaluate(now, agents)

    def _evaluate(self, now: float, agents: list[Agent] | None = None) -> None:
        for agent in self.agents.values() if agents is None else agents:
            if agent.tracker.evaluate(now):
                agent.changed.set()
                self.listener.agent_changed(agent)

    async def _refresh_loop(self) -> None:
        timeout: float | None = None
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
            # let a burst of doorbells ring before reading: one round of captures for all
            await asyncio.sleep(COALESCE)
            self._wake.clear()
            now = time.monotonic()
            due: list[Agent] = []
            timed: list[Agent] = []
            deadlines: list[float] = []
            for agent in self.agents.values():
                if agent.dirty and agent.pane:
                    nxt = agent.last_capture + self._interval(agent)
                    if nxt <= now:
                        due.append(agent)
                    else:
                        deadlines.append(nxt)
                if (d := agent.tracker.next_deadline()) is not None:
                    if d <= now:
                        timed.append(agent)
                    else:
                        deadlines.append(d)
            if due and self.connected:
                try:
                    await self._refresh(due)
                except SwarmError:
                    pass  # the link went down; the Exit event says so
            self._evaluate(now, timed)
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    # ------------------------------------------------------------------ commands
    def resolve(self, names: list[str], all_agents: bool = False, role: str | None = None,
                exclude: str | None = None) -> list[Agent]:
        """Agents named (case-insensitive), or all, or all with a role; unknown names raise."""
        if all_agents or role:
            out = [a for a in self.agents.values()
                   if (all_agents or a.role == role) and a.name != exclude]
            if not out:
                what = f"role {role!r}" if role else "this fleet"
                raise AgentNotFound(f"no agents with {what} (roles: {self.roles()})")
            return out
        by_key = {a.name.casefold(): a for a in self.agents.values()}
        out = []
        for n in names:
            agent = by_key.get(n.casefold())
            if agent is None:
                raise AgentNotFound(
                    f"no agent named {n!r} in fleet {self.name!r} (see `swarm ls`)")
            out.append(agent)
        return out

    def roles(self) -> str:
        return ", ".join(sorted({a.role for a in self.agents.values()}))

    def send(self, names: list[str], text: str, sender: str = HUMAN) -> list[Message]:
        """Journal a message for each recipient and queue it; returns the journal rows."""
        clean = sanitize(text)
        if not clean.strip():
            raise SwarmError("empty message: nothing to send")
        agents = self.resolve(names)
        out = []
        for agent in agents:
            message = self.store.enqueue(sender, agent.name, clean)
            self._injector.enqueue(agent, message)
            out.append(message)
        return out

    def set_focus(self, name: str, label: str, by: str = HUMAN) -> Agent:
        (agent,) = self.resolve([name])
        agent.focus = " ".join(sanitize(label).split())[:120]
        self.store.set_focus(agent.name, agent.focus, by)
        self.listener.agent_changed(agent)
        return agent

    def attach_argv(self, name: str) -> list[str]:
        (agent,) = self.resolve([name])
        return self.host.attach_argv(agent.window) if agent.window else []

    def _message_queued(self, message: Message, agent: Agent) -> None:
        self.listener.message_changed(message)
        self.listener.agent_changed(agent)

    def sender_for_token(self, token: str | None) -> str:
        if not token:
            return HUMAN
        name = self.store.agent_for_token(token)
        if name is None:
            raise SwarmError("SWARM_TOKEN is not a token of this fleet: unset it or use the "
                             "shell of an agent of this fleet")
        return name

    def states(self) -> dict[str, AgentState]:
        return {a.name: a.state for a in self.agents.values()}

