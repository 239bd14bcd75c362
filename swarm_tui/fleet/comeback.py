"""Agents started again after their tmux server was gone: a node rebooted, the OOM killer
took tmux, someone ran `tmux kill-server`. The engine finds their windows missing (when the
node's link comes back, or at its own next start) and makes new ones; here is what each new
window's agent is told.

A CLI that can resume a conversation (Claude Code `--resume ID`, Codex `resume ID`) was
started in the one its hooks last reported (`Agent.session`), and is reminded of its focus
and open task. One that cannot was started anew: it gets the layout's prompt again, its focus,
its open task and the last handoff note it wrote (fleet/fresh.py), if any. Either way this
goes first, before anything queued for it meanwhile, which is typed after it, once.
"""

from __future__ import annotations

import shlex
from typing import Protocol

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import Store
from swarm_tui.hosts.base import Host

WHY = "its tmux server was gone: a reboot, the OOM killer or a killed tmux"
RESUMED = ("swarm: your CLI was started again{where} ({why}) and resumed this conversation; "
           "whatever ran in its shell then is gone.\nYour focus: {focus}\n{task}")
ANEW = ("Fresh start: your CLI was started again{where} ({why}) and could not resume its "
        "conversation; you continue an earlier session's work.\nYour focus: {focus}\n{task}"
        "{note}")


class ComebackHost(Protocol):
    """What telling restarted agents needs of the fleet: its journal, each agent's host, a
    message queued ahead of the rest, and where notices go."""

    store: Store

    def host_of(self, agent: Agent) -> Host: ...

    def send_first(self, agent: Agent, text: str) -> None: ...

    def notice(self, text: str) -> None: ...


def task_line(store: Store, agent: Agent) -> str:
    task = store.current_tasks().get(agent.name)
    if task is None:
        return "You have no open task."
    return f"Your open task #{task.id} ({task.status}): {task.spec}"


async def last_note(host: Host, agent: Agent) -> str:
    """The handoff note the agent last wrote on its host ("" when none is there)."""
    state = host.launch_context().state_dir
    if not state:
        return ""
    try:
        rc, out = await host.shell(f"cat {shlex.quote(f'{state}/handoff-{agent.name}.md')}",
                                   timeout=20)
    except (SwarmError, OSError, TimeoutError):
        return ""
    return out.strip() if rc == 0 else ""


async def came_back(fleet: ComebackHost, agents: list[Agent], where: str = "") -> None:
    """Tell each agent started again what it needs before its backlog; one notice for all.
    `where`: " on NODE" when a node came back, "" at the engine's own start."""
    resumed = [a.name for a in agents if a.resumed]
    anew = [a.name for a in agents if not a.resumed]
    parts = []
    if resumed:
        parts.append(f"{', '.join(resumed)} resumed {'its' if len(resumed) == 1 else 'their'}"
                     " conversation")
    if anew:
        parts.append(f"{', '.join(anew)} started anew (the CLI cannot resume, or no "
                     "conversation of it was recorded)")
    fleet.notice(f"{len(agents)} agent{'s' * (len(agents) != 1)} started again{where} ({WHY})"
                 f": {'; '.join(parts)}; each is told its focus and open task before anything "
                 "queued for it")
    for agent in agents:
        focus = agent.focus or "(none set)"
        task = task_line(fleet.store, agent)
        if agent.resumed:
            fleet.send_first(agent, RESUMED.format(where=where, why=WHY, focus=focus,
                                                   task=task))
            continue
        if agent.spec.prompt:
            fleet.send_first(agent, agent.spec.prompt)
        note = await last_note(fleet.host_of(agent), agent)
        fleet.send_first(agent, ANEW.format(
            where=where, why=WHY, focus=focus, task=task,
            note=f"\n\nHandoff note from before:\n{note}" if note else ""))
