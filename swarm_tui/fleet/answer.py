"""Answering an agent's permission dialog for a human, with the CLI's own keys.

A human saw a dialog in a tile and pressed `y`, `n` or an option's number; by the time the
request gets here the dialog may have gone (answered in an attached terminal, cancelled) or
been replaced by another one. So the screen is read again first and the answer goes only
into the dialog the human saw: the same question and options, on screen now. Keys go one at
a time down the control channel, and the screen is read again before each key after the
first and before every Enter: an Enter goes only into the same dialog, with its selection
mark (if it has one) on the wanted option. What no check closes is the instant between that
reading and the key's arrival: a dialog that closes then can take an Enter into the input
box. A key that landed in an input box that way is taken out again (an Enter cannot be).
Then the answer waits, on a deadline, for the dialog to go, and says what happened. The
whole answer has a deadline (ANSWER_DEADLINE): a hung link never holds the agent's lock.

Only a human answers: an agent may not answer another agent's prompt (or its own), and a
request whose sender cannot be told is refused (swarm_tui/fleet/identity.py).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from swarm_tui.agents.answers import pick
from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.injection import HUMAN

if TYPE_CHECKING:
    from swarm_tui.fleet.engine import Fleet

ANSWER_WAIT = 5.0  # seconds for the dialog to go once its answer is typed
ANSWER_DEADLINE = 10.0  # seconds for the whole answer, the lock's wait included
CURSOR_WAIT = 1.0  # seconds for a selection mark to show where the arrows moved it
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
        self,
        name: str,
        choice: str,
        question: str | None,
        sender: str = HUMAN,
        options: Sequence[Sequence[str]] | None = None,
    ) -> dict[str, Any]:
        """Answer `name`'s dialog with `choice` ("yes", "no", "1".."9"). `question` and
        `options` are what the human saw (None: whatever it asks now). Returns what was
        picked and the agent's state after; raises NotAnswered / CannotAnswer with one line
        otherwise."""
        if sender != HUMAN:
            raise NotAnswered(
                f"{sender} may not answer {name}'s prompt: only a human "
                "answers prompts (from a view, or `swarm answer` in a shell); nothing "
                "was typed"
            )
        (agent,) = self.fleet.resolve([name])
        sent: list[str] = []  # the keys sent so far, for the deadline's message
        try:
            async with asyncio.timeout(ANSWER_DEADLINE):
                async with self._locks.setdefault(agent.name, asyncio.Lock()):
                    return await self._answer(agent, choice, question, options, sent)
        except TimeoutError:
            what = f"after {' '.join(sent)} was typed" if sent else "nothing was typed"
            raise NotAnswered(
                f"{agent.name} ({agent.spec.cli}): no answer within {ANSWER_DEADLINE:.0f} s "
                f"(its host's link is slow or hung); {what}; attach to look"
            ) from None

    async def _answer(
        self,
        agent: Agent,
        choice: str,
        question: str | None,
        options: Sequence[Sequence[str]] | None,
        sent: list[str],
    ) -> dict[str, Any]:
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
        if options is not None and tuple(tuple(o) for o in options) != before.options:
            listed = " / ".join(f"{k}. {label}" for k, label in before.options) or "none read"
            raise NotAnswered(
                f"{name}'s dialog changed: its options are now {listed}; nothing was "
                "typed (look at it again)"
            )
        index = pick(agent.spec.cli, before, choice)
        keys = agent.adapter.option_keys(before, index)
        if not keys or not all(KEY.match(k) for k in keys):
            raise NotAnswered(f"{name}: no keys to type for that answer; attach to answer it")
        control = self.fleet.control_for(agent)
        typed = ""
        for n, key in enumerate(keys):
            if n or key == "Enter":  # never an Enter but into the dialog seen just now
                if n:
                    await asyncio.sleep(agent.adapter.answer_gap)
                now = await self._read(agent)
                if key == "Enter" and before.cursor is not None:
                    now = await self._selected(agent, before, index, now)
                done = f"after {' '.join(keys[:n])}" if n else "nothing was typed"
                if not same_dialog(now, before):
                    await self._take_back(agent, now, typed)
                    raise NotAnswered(
                        f"{name}'s dialog closed or changed while it was being answered "
                        f"({done}); the rest was not typed"
                    )
                if key == "Enter" and before.cursor is not None and now.cursor != index:
                    at = (
                        "nowhere it can read"
                        if now.cursor is None
                        else f"{now.options[now.cursor][0]}. {now.options[now.cursor][1]}"
                    )
                    raise NotAnswered(
                        f"{name}: its selection is on {at}, not on "
                        f"{before.options[index][0]}. {before.options[index][1]} ({done}); "
                        "Enter was not pressed: attach to answer it"
                    )
            await control.run(f"send-keys -t {agent.pane} {key}")
            sent.append(key)
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

    async def _selected(self, agent: Agent, before: Reading, index: int, now: Reading) -> Reading:
        """The first reading, from `now` on, with the selection mark on option `index` (a
        CLI redraws an arrow's move in its own time), or with the dialog gone or changed;
        the last one read at CURSOR_WAIT."""
        deadline = time.monotonic() + CURSOR_WAIT
        while now.cursor != index and same_dialog(now, before) and time.monotonic() < deadline:
            await asyncio.sleep(POLL)
            now = await self._read(agent)
        return now

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
