"""The fleet's links to its hosts: each brought up (its agents' windows created or re-attached,
every pane read), its control client's events followed, and a link that drops reconnected
with backoff and every pane resynced while the others go on.

What a link's change of state means for the fleet (alerts, agents unreachable, the journal
when the fleet's tmux is gone) is the engine's: it is told through `LinkOwner`
(fleet/ports.py), so this module never imports the engine.
"""

from __future__ import annotations

import asyncio
import random
import shlex
import time
from collections.abc import Callable, Coroutine
from typing import Any

from swarm_tui.config.hosts import LOCAL
from swarm_tui.errors import ConfigError, SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.ports import LinkOwner
from swarm_tui.fleet.screens import ScreenReader
from swarm_tui.fleet.sizes import HUMAN_MOVES, WindowSizer
from swarm_tui.hosts.base import Host, LaunchContext
from swarm_tui.tmux.client import ControlClient, TmuxCommandError
from swarm_tui.tmux.commands import quote
from swarm_tui.tmux.protocol import (
    Event,
    Exit,
    Notification,
    Output,
    Pause,
    SubscriptionChanged,
    WindowClose,
)

BACKOFF_MAX = 5.0  # seconds: reconnects try at least this often
DEAD_SUB = "swarm-dead"
ACTIVITY_SUB = "swarm-active"  # a muted pane's activity, once a second (fleet/screens.py)

Spawn = Callable[[Coroutine[Any, Any, None], str], None]  # a task the engine keeps and stops


def launch_line(agent: Agent, ctx: LaunchContext, command: str = "") -> str:
    """The shell line that starts an agent's CLI in its window (`command`, else its new
    conversation). `swarm` goes first on PATH, so the agent can message the fleet from its
    own shell. Agents do not get $TMUX: with it, `tmux send-keys` would type into another
    agent with no journal row and no sender."""
    return f'unset TMUX TMUX_PANE; PATH={shlex.quote(ctx.bin_dir)}:"$PATH"; export PATH; ' + (
        command or agent.adapter.launch(agent.spec, ctx)
    )


async def list_windows(control: ControlClient, session: str) -> dict[str, tuple[str, str, bool]]:
    """agent name -> (window, pane, whether its pane is dead), for the session's windows."""
    # '|' separates fields: tmux shows a control client a tab as '_' (seen over SSH),
    # and no agent name, window or pane id contains '|'
    reply = await control.run(
        f"list-windows -t ={session} -F "
        + quote("#{window_id}|#{pane_id}|#{pane_dead}|#{@swarm_agent}")
    )
    found = {}
    for line in reply.text().splitlines():
        parts = line.split("|")
        if len(parts) == 4 and parts[3]:
            found[parts[3]] = (parts[0], parts[1], parts[2] == "1")
    return found


class HostLinks:
    """Brings the fleet's hosts up, follows their events, and reconnects those that drop."""

    def __init__(
        self,
        links: dict[str, HostLink],
        owner: LinkOwner,
        screens: ScreenReader,
        sizer: WindowSizer,
        spawn: Spawn,
    ):
        self.links = links
        self._owner = owner
        self._screens = screens
        self._sizer = sizer
        self._spawn = spawn
        self.stopping = False  # the fleet stops watching: a link that ends is not retried

    async def start(self) -> None:
        """Bring every host up at once; a remote host that fails keeps retrying in the
        background while the rest work. A local failure (tmux missing) raises, and so does
        a worktree that cannot be made on any host reached: before any window is made. So
        with worktrees every host is checked first; without, each host's windows are made
        as soon as it is reached, not when the slowest node is."""
        links = list(self.links.values())
        results: list[BaseException | None] = [None] * len(links)
        gated = any(agent.spec.worktree for agent in self._owner.agents.values())
        if gated:

            async def reach(link: HostLink) -> None:
                await link.host.connect()
                await self._owner.prepare_worktrees(link, create=False)

            reached = await asyncio.gather(*(reach(link) for link in links), return_exceptions=True)
            bad = [str(r) for r in reached if isinstance(r, ConfigError)]
            if bad:  # nothing starts: no node keeps a session made for it
                await asyncio.gather(
                    *(link.host.discard_session() for link in links), return_exceptions=True
                )
                raise ConfigError("\n".join(bad))
            results = [r if isinstance(r, BaseException) else None for r in reached]
        up = [link for link, r in zip(links, results, strict=True) if r is None]
        done = await asyncio.gather(
            *(self.bring_up(link, reached=gated) for link in up), return_exceptions=True
        )
        for link, result in zip(up, done, strict=True):
            results[links.index(link)] = result if isinstance(result, BaseException) else None
        for link, result in zip(links, results, strict=True):
            if isinstance(result, BaseException):
                if link.name == LOCAL or not isinstance(result, SwarmError):
                    raise result
                self._owner.link_state(link, False, str(result))
                self._spawn(self.reconnect(link), f"reconnect-{link.name}")

    async def bring_up(self, link: HostLink, reached: bool = False) -> None:
        """Connect a host (unless `reached`), make its agents' worktrees, create or
        re-attach their windows, read every pane."""
        owner, screens = self._owner, self._screens
        host = link.host
        if not reached:
            await host.connect()
        try:
            await owner.prepare_worktrees(link, create=True, checked=reached)
        except ConfigError:
            await host.discard_session()  # its agents do not start: no empty session left
            raise
        await host.ensure_session(
            str(owner.loaded.path.parent.resolve()) if link.name == LOCAL else ""
        )
        control = await host.open_control(lambda event: self.on_event(link, event))
        await control.run_all(
            [
                f"refresh-client -B {quote(DEAD_SUB + ':%*:#{pane_dead}')}",
                f"refresh-client -B {quote(ACTIVITY_SUB + ':%*:#{window_activity}')}",
            ]
        )
        existing = await list_windows(control, host.session)
        link.by_pane.clear()
        link.control = control
        mine = [agent for agent in owner.agents.values() if agent.spec.host == link.name]
        new = [agent for agent in mine if agent.name not in existing]
        lost = [agent for agent in new if agent.window]  # its tmux server was gone meanwhile
        await self._new_windows(control, host, new)
        for agent in mine:
            if agent.name in existing:
                agent.window, agent.pane, dead = existing[agent.name]
                agent.tracker.pane_died(dead)
            else:
                agent.tracker.pane_died(False)
                if agent.name not in owner.created:
                    owner.created.append(agent.name)
            screens.reattached(agent)
            link.by_pane[agent.pane] = agent
        link.attempts = 0
        link.set_state(True)  # connected: the first round of captures reads every pane
        self._sizer.forget(link)  # its windows are as tmux made them
        await screens.refresh(list(link.by_pane.values()))
        owner.link_state(link, True, "")
        if lost:
            owner.windows_lost(link, lost)
        for agent in link.by_pane.values():
            agent.changed.set()  # queued messages may go now
        screens.wake.set()

    async def create_window(self, link: HostLink, agent: Agent) -> bool:
        """A window for an agent added while the fleet runs (live reload); one that left the
        layout earlier and comes back gets its old window, still running, back."""
        assert link.control is not None
        existing = await list_windows(link.control, link.host.session)
        created = agent.name not in existing
        if not created:
            agent.window, agent.pane, dead = existing[agent.name]
            agent.tracker.pane_died(dead)
        else:
            await self._owner.prepare_worktrees(link, create=True, only=agent)
            await self._new_windows(link.control, link.host, [agent])
            self._owner.created.append(agent.name)
        link.by_pane[agent.pane] = agent
        self._screens.mark(agent)
        return created

    async def _new_windows(self, control: ControlClient, host: Host, agents: list[Agent]) -> None:
        """Windows for `agents`, their commands pipelined (a node's windows cost two round
        trips, not two each); each window is named for its agent (`@swarm_agent`) before
        a failure is raised, so a retry finds the ones made."""
        if not agents:
            return
        replies = await asyncio.gather(
            *await control.send([self._window_line(host, agent) for agent in agents])
        )
        made = []
        for agent, reply in zip(agents, replies, strict=True):
            if reply.ok:
                agent.window, agent.pane = reply.text().split()
                made.append(agent)
        if made:
            await control.run_all(
                [
                    f"set-option -w -t {agent.window} @swarm_agent {quote(agent.spec.name)}"
                    for agent in made
                ]
            )
        failed = next((r for r in replies if not r.ok), None)
        if failed is not None:
            raise TmuxCommandError(f"tmux: {failed.text()} (new window on {host.name})")

    def _window_line(self, host: Host, agent: Agent) -> str:
        spec = agent.spec
        ctx = host.launch_context()
        env = " ".join(
            f"-e {quote(f'{k}={v}')}" for k, v in self._owner.agent_env(agent, host).items()
        )
        cwd = f"-c {quote(agent.cwd)}" if agent.cwd else ""
        # a new window for an agent whose conversation its hooks reported: resume it
        resume = agent.adapter.resume(spec, ctx, agent.session) if agent.session else ""
        agent.resumed = bool(resume)
        command = launch_line(agent, ctx, resume)
        return (
            f"new-window -d -P -F {quote('#{window_id} #{pane_id}')} -t ={host.session}: "
            f"-n {quote(spec.name)} {cwd} {env} {quote(command)}"
        )

    def on_event(self, link: HostLink, event: Event) -> None:
        """One event of a host's control client: output marks its pane to be read again."""
        screens = self._screens
        if isinstance(event, Output):
            agent = link.by_pane.get(event.pane)
            if agent is not None:
                now = time.monotonic()
                if not agent.redraws(now):  # (a redraw for a new size is not output)
                    agent.tracker.output(now)
                    agent.last_output_wall = time.time()
                screens.mark(agent)
        elif isinstance(event, Pause):
            agent = link.by_pane.get(event.pane)
            if agent is not None and not agent.muted:  # a muted pane's pause is ours
                agent.paused = True
                screens.mark(agent)
        elif isinstance(event, SubscriptionChanged):
            agent = link.by_pane.get(event.pane)
            if agent is None:
                pass
            elif event.name == ACTIVITY_SUB:
                screens.activity(agent)
            elif event.name == DEAD_SUB:
                agent.tracker.pane_died(event.value.strip() == "1")
                screens.mark(agent)
        elif isinstance(event, Notification) and event.name in HUMAN_MOVES:
            self._sizer.human_moved()
        elif isinstance(event, WindowClose):
            for agent in list(link.by_pane.values()):
                if agent.window == event.window:
                    agent.tracker.pane_died(True)
                    link.by_pane.pop(agent.pane, None)
                    agent.pane = ""
                    screens.wake.set()
        elif (
            isinstance(event, Exit)
            and link.connected
            and link.control is not None
            and link.control.closed.is_set()
        ):
            reason = event.reason or "tmux control client exited"
            if self.stopping:
                link.set_state(False, reason)
            else:
                self._owner.link_state(link, False, reason)
                self._spawn(self.reconnect(link), f"reconnect-{link.name}")

    async def reconnect(self, link: HostLink) -> None:
        """Bring a dropped host back with jittered backoff, then resync every pane. A local
        server whose session is gone means the fleet was stopped: end it."""
        delay = 0.2
        while not self.stopping and not link.ended:
            link.attempts += 1
            try:
                if link.name == LOCAL and not await link.host.session_exists():
                    self._owner.tmux_lost()
                    return
                await self.bring_up(link)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever it was, the host is retried
                detail = str(exc) if isinstance(exc, SwarmError | OSError) else repr(exc)
                if detail != link.detail and not link.ended:
                    self._owner.link_state(link, False, detail)
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, BACKOFF_MAX)
