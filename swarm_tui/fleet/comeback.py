"""Agents started again after their tmux server was gone: a node rebooted, the OOM killer
took tmux, someone ran `tmux kill-server`. The engine finds their windows missing (when the
node's link comes back, or at its own next start) and makes new ones; here is what each new
window's agent is told.

A CLI that can resume a conversation (Claude Code `--resume ID`, Codex `resume ID`) was
started in the one its hooks last reported (`Agent.session`), and is reminded of its focus
and open task. One that cannot was started anew: it gets the layout's prompt again, its focus,
its open task and the last handoff note it wrote (fleet/fresh.py), if any. Either way this
goes first, before anything queued for it meanwhile, which is typed after it, once. At the
engine's start the journal's undelivered rows are queued again here too (`requeue`); for a
CLI started anew at start, the old run's backlog is settled instead (`settle_gone`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from typing import Protocol

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.store import SENDING, UNCERTAIN, Message, Store
from swarm_tui.hosts.base import Host

WHY = "its tmux server was gone: a reboot, the OOM killer or a killed tmux"
RESUMED = (
    "swarm: your CLI was started again{where} ({why}) and resumed this conversation; "
    "whatever ran in its shell then is gone.\nYour focus: {focus}\n{task}"
)
ANEW = (
    "Fresh start: your CLI was started again{where} ({why}) and could not resume its "
    "conversation; you continue an earlier session's work.\nYour focus: {focus}\n{task}"
    "{note}"
)


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
        rc, out = await host.shell(
            f"cat {shlex.quote(f'{state}/handoff-{agent.name}.md')}", timeout=20
        )
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
        parts.append(
            f"{', '.join(resumed)} resumed {'its' if len(resumed) == 1 else 'their'} conversation"
        )
    if anew:
        parts.append(
            f"{', '.join(anew)} started anew (the CLI cannot resume, or no "
            "conversation of it was recorded)"
        )
    fleet.notice(
        f"{len(agents)} agent{'s' * (len(agents) != 1)} started again{where} ({WHY})"
        f": {'; '.join(parts)}; each is told its focus and open task before anything "
        "queued for it"
    )
    for agent in agents:
        focus = agent.focus or "(none set)"
        task = task_line(fleet.store, agent)
        if agent.resumed:
            fleet.send_first(agent, RESUMED.format(where=where, why=WHY, focus=focus, task=task))
            continue
        if agent.spec.prompt:
            fleet.send_first(agent, agent.spec.prompt)
        note = await last_note(fleet.host_of(agent), agent)
        fleet.send_first(
            agent,
            ANEW.format(
                where=where,
                why=WHY,
                focus=focus,
                task=task,
                note=f"\n\nHandoff note from before:\n{note}" if note else "",
            ),
        )


def settle_gone(store: Store, listener: FleetListener, agent: Agent, since: float) -> None:
    """A new window for an agent the journal knows, whose CLI could not resume: its old
    conversation died without `swarm down` (tmux was killed). What was queued for it before
    this start (`since`) is settled as `down` would have, said once, so the new agent starts
    with its own prompt."""
    reason = "its previous run ended without `swarm down` (tmux died); it was started anew"
    cancelled, uncertain, reset = store.settle_gone(agent.name, since, reason)
    if cancelled or uncertain or reset:
        caught = (
            (
                f", {uncertain} caught while being typed (uncertain: they may have "
                "reached the old run)"
            )
            if uncertain
            else ""
        )
        listener.notice(
            f"{agent.name} was started anew ({reason.split(';')[0]}): {cancelled} message"
            f"{'s' * (cancelled != 1)} queued for its old run cancelled{caught}, {reset} "
            f"open task{'s' * (reset != 1)} back to pending (`swarm messages` lists them)"
        )


def requeue(
    store: Store, listener: FleetListener, agent: Agent, enqueue: Callable[[Agent, Message], None]
) -> None:
    """Queue the agent's undelivered journal rows; one a stopped swarm was typing becomes
    uncertain (it may have arrived): never typed twice, and said."""
    for message in store.open_messages(agent.name):
        if message.id in agent.waiting:
            continue  # already in its queue
        if message.status == SENDING:
            store.mark(message.id, UNCERTAIN, "swarm stopped while typing it")
            listener.notice(
                f"message #{message.id} to {agent.name} is uncertain: swarm stopped while "
                f"typing it, so it may or may not have reached {agent.name} (look at its "
                "screen); it is never typed twice"
            )
            updated = store.message(message.id)
            if updated is not None:
                listener.message_changed(updated)
            continue
        enqueue(agent, message)


def lost_reason(store: Store, listener: FleetListener, agents: Iterable[Agent], fleet: str) -> str:
    """What the fleet says when its local tmux server is gone (killed or crashed): a message
    caught while being typed is uncertain (said), and how many queued ones were not typed."""
    caught = store.settle_sending("tmux died while it was being typed")
    for message in caught:
        listener.notice(
            f"message #{message.id} to {message.recipient} is uncertain: "
            "tmux died while it was being typed"
        )
    queued = sum(len(a.waiting) for a in agents) - len(caught)
    uncertain = f", {len(caught)} uncertain (caught while being typed)" if caught else ""
    return (
        f"fleet {fleet!r} lost its tmux server (killed or crashed, not `swarm "
        f"down`): its agents are gone; {queued} queued message{'s' * (queued != 1)} "
        f"not typed{uncertain} (`swarm messages` lists them); `swarm up` starts it "
        "anew"
    )
