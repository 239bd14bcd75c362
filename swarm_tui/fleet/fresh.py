"""Fresh starts: an agent hands off its state in a note, starts a new conversation, and gets
its focus and the note back as its first message. Long sessions drift; this resets them."""

from __future__ import annotations

import asyncio
import shlex
import time
from typing import TYPE_CHECKING

from swarm_tui.config.skills import skill_text
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.store import OPEN, Store

if TYPE_CHECKING:
    from swarm_tui.fleet.agent import Agent
    from swarm_tui.fleet.ports import FreshHost

HANDOFF = (  # used when skills/handoff.md is missing
    "You will be restarted with a fresh context in a moment. Write a handoff note for the "
    "agent who continues your work to the file {path}: what you are working on, what is "
    "done, what is left, which files matter, and anything surprising you learned. Be "
    "concrete. Reply with one line, 'handoff written', when the file is saved."
)
RESUME = (
    "Fresh start: you continue an earlier session's work.\nYour focus: {focus}\n\n"
    "Handoff note from before the restart:\n{note}"
)
TURN_TIMEOUT = 15 * 60  # seconds an agent may take to write its handoff note


async def settled(
    store: Store, agent: Agent, message_id: int, timeout: float, what: str = "fresh start"
) -> None:
    """Wait until a message was delivered and the turn it started is over; `what` the
    message is for says what stopped when it was not (a fresh start, a review)."""
    deadline = time.monotonic() + timeout
    while True:
        row = store.message(message_id)
        if row is not None and row.status not in OPEN:
            if row.status != "delivered":
                why = f" ({row.detail})" if row.detail else ""
                raise SwarmError(
                    f"{agent.name}: {what} stopped: message #{message_id} {row.status}{why}"
                )
            if agent.tracker.ready:
                return
        left = deadline - time.monotonic()
        if left <= 0:
            raise SwarmError(f"{agent.name}: {what} timed out waiting for its turn")
        agent.changed.clear()
        try:
            await asyncio.wait_for(agent.changed.wait(), min(left, 1.0))
        except TimeoutError:
            pass


def handoff_path(fleet: FreshHost, agent: Agent) -> str:
    """Where the agent writes its handoff note: swarm's private state directory on the
    agent's host, never its working directory (a source tree the note would litter)."""
    state = fleet.link_of(agent).host.launch_context().state_dir
    if not state:
        raise SwarmError(f"{agent.name}: fresh start stopped: its host has no state directory")
    return f"{state}/handoff-{agent.name}.md"


async def fresh_start(fleet: FreshHost, agent: Agent, handoff: bool = True) -> str:
    """Run the whole fresh start; returns what was re-injected."""
    host = fleet.link_of(agent).host
    note = "(no handoff note was asked for)"
    if handoff:
        path = handoff_path(fleet, agent)
        folder = shlex.quote(path.rsplit("/", 1)[0])
        rc, out = await host.shell(
            f"mkdir -p {folder} && chmod 700 {folder} && rm -f {shlex.quote(path)}"
        )
        if rc != 0:
            raise SwarmError(
                f"{agent.name}: fresh start stopped: cannot prepare {folder} on "
                f"host {host.name}: {out.strip()}"
            )
        text = skill_text(
            "handoff", {"path": path, "agent": agent.name, "focus": agent.focus}, fallback=HANDOFF
        )
        (msg,) = fleet.send([agent.name], text, sender="swarm")
        await settled(fleet.store, agent, msg.id, TURN_TIMEOUT)
        rc, out = await host.shell(f"cat {shlex.quote(path)}")
        note = out.strip() if rc == 0 and out.strip() else "(the agent wrote no handoff note)"
    command = agent.adapter.fresh_command
    if command:
        (msg,) = fleet.send([agent.name], command, sender="swarm")
        await settled(fleet.store, agent, msg.id, 120)
    else:
        await fleet.restart(agent)
    text = RESUME.format(focus=agent.focus or "(none set)", note=note)
    fleet.send([agent.name], text, sender="swarm")
    return text
