"""Answering an agent's permission dialog for a human, with the CLI's own keys.

A human saw a dialog in a tile and pressed `y`, `n` or an option's number; by the time the
request gets here the dialog may have gone (answered in an attached terminal, cancelled) or
been replaced by another one. So the screen is read again first and the answer goes only
into the dialog the human saw: the same question, on screen now. Keys go one at a time
down the control channel, and before each key after the first the screen is read again, so
an Enter never follows an arrow into an input box. If a key still landed in an input box
(the dialog closed in the instant before it arrived), it is taken out again. Then the
answer waits, on a deadline, for the dialog to go, and says what happened.

Only a human answers: an agent may not answer another agent's prompt (or its own).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING, Any

from swarm_tui.agents.answers import pick
from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.injection import HUMAN

if TYPE_CHECKING:
    from swarm_tui.fleet.engine import Fleet

ANSWER_WAIT = 5.0  # seconds for the dialog to go once its answer is typed
POLL = 0.05  # seconds between two readings of the screen while waiting
STRAY_WAIT = 0.3  # seconds a key that missed its dialog takes to show in an input box
KEY = re.compile(r"^[A-Za-z0-9-]{1,12}$")  # a tmux key name or one character: no quoting


class NotAnswered(SwarmError):
    """The answer was refused or did not take; the message says what was typed, if
    anything."""


def same_dialog(now: Reading, then: Reading) -> bool:
    """Whether the screen still shows the dialog read before: asking, same question and
    options (an agent that asks again about something else has a new dialog)."""
    return (
        now.state is AgentState.NEEDS_PERMISSION
        and now.question == then.question
        and now.options == then.options
    )


class Answers:
    """Answers the fleet's permission dialogs, one at a time per agent."""

    def __init__(self, fleet: Fleet):
        self.fleet = fleet
        self._locks: dict[str, asyncio.Lock] = {}

    async def answer(
        self, name: str, choice: str, question: str | None, sender: str = HUMAN
    ) -> dict[str, Any]:
        """Answer `name`'s dialog with `choice` ("yes", "no", "1".."9"). `question` is the
        question the human saw (None: whatever it asks now). Returns what was picked and the
        agent's state after; raises NotAnswered / CannotAnswer with one line otherwise."""
        if sender != HUMAN:
            raise NotAnswered(
                f"{sender} may not answer {name}'s prompt: only a human "
                "answers prompts (from a view, or `swarm` in a shell); nothing "
                "was typed"
            )
        (agent,) = self.fleet.resolve([name])
        async with self._locks.setdefault(agent.name, asyncio.Lock()):
            return await self._answer(agent, choice, question)

    async def _answer(self, agent: Agent, choice: str, question: str | None) -> dict[str, Any]:
        name = f"{agent.name} ({agent.spec.cli})"
        if not self.fleet.reachable(agent):
            raise NotAnswered(f"{name}: its host's link is down; nothing was typed")
        before = await self._read(agent)
        if before.state is not AgentState.NEEDS_PERMISSION:
            shown = before.state.value if before.state else agent.state.value
            raise NotAnswered(
                f"{name} is not asking anything now (it is {shown}); nothing was typed"
            )
        if question is not None and before.question != question:
            raise NotAnswered(
                f"{name}'s dialog changed: it now asks {before.question!r}; "
                "nothing was typed (look at it again)"
            )
        index = pick(agent.spec.cli, before, choice)
        keys = agent.adapter.option_keys(before, index)
        if not keys or not all(KEY.match(k) for k in keys):
            raise NotAnswered(f"{name}: no keys to type for that answer; attach to answer it")
        control = self.fleet.control_for(agent)
        typed = ""
        for n, key in enumerate(keys):
            if n:
                await asyncio.sleep(agent.adapter.answer_gap)
                now = await self._read(agent)
                if not same_dialog(now, before):
                    await self._take_back(agent, now, typed)
                    raise NotAnswered(
                        f"{name}'s dialog closed while it was being answered "
                        f"(after {' '.join(keys[:n])}); the rest was not typed"
                    )
            await control.run(f"send-keys -t {agent.pane} {key}")
            if len(key) == 1:
                typed += key
        after = await self._wait_gone(agent, before)
        if after is None:
            raise NotAnswered(
                f"{name}: typed {' '.join(keys)}, but its dialog is still "
                f"open after {ANSWER_WAIT:.0f} s; attach to look"
            )
        now = after
        if typed and await self._stray(agent, now, typed):
            raise NotAnswered(
                f"{name}'s dialog closed before the answer reached it: the "
                f"stray {typed!r} was taken back out of its input box"
            )
        self.fleet.screens.mark(agent)
        key, label = before.options[index]
        return {
            "ok": True,
            "agent": agent.name,
            "choice": choice,
            "option": f"{key}. {label}",
            "keys": keys,
            "state": now.state.value if now.state else "",  # "": unknown
            "asks": now.question if now.state is AgentState.NEEDS_PERMISSION else "",
        }

    async def _read(self, agent: Agent) -> Reading:
        """The agent's screen read now (its tracker hears the reading too)."""
        lines = await self.fleet.capture(agent)
        if not agent.adapter.reads_screen:
            return Reading(None)
        return agent.adapter.with_colours(agent.screen, agent.adapter.read(lines))

    async def _wait_gone(self, agent: Agent, before: Reading) -> Reading | None:
        """The first reading without the dialog `before`; None if it is still there at the
        deadline."""
        deadline = time.monotonic() + ANSWER_WAIT
        while True:
            now = await self._read(agent)
            if not same_dialog(now, before):
                return now
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(POLL)

    async def _stray(self, agent: Agent, now: Reading, typed: str) -> bool:
        """Whether what was typed turns up in an input box within STRAY_WAIT (a CLI echoes
        a key in its own time) — then it is taken back out."""
        deadline = time.monotonic() + STRAY_WAIT
        while True:
            if await self._take_back(agent, now, typed):
                return True
            if time.monotonic() >= deadline or now.state is AgentState.NEEDS_PERMISSION:
                return False  # (a new dialog has no input box to land in)
            await asyncio.sleep(POLL)
            now = await self._read(agent)

    async def _take_back(self, agent: Agent, now: Reading, typed: str) -> bool:
        """If what was typed sits alone in an input box (the dialog had gone before it
        arrived), delete it; True when it did."""
        if not typed or now.draft is None or now.draft.strip() != typed:
            return False
        control = self.fleet.control_for(agent)
        await control.run(f"send-keys -t {agent.pane} " + " ".join(["BSpace"] * len(typed)))
        return True
