"""Typing messages into agents as real user input, in order, verified, one agent at a time.

Each agent has one ordered queue. A message is journaled before it is typed; it waits until
the agent's input box is ready; its text goes into a uniquely named tmux buffer through the
control channel (never argv or a shell) and is pasted with bracketed paste; Enter follows
separately after the adapter's delay; the screen is read back to confirm the box emptied,
with at most one rescue Enter.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Awaitable, Callable

from swarm_tui.errors import TmuxError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import DELIVERED, FAILED, SENDING, UNCERTAIN, Message, Store
from swarm_tui.tmux.client import ControlClient
from swarm_tui.tmux.commands import quote

CHUNK_CHARS = 4000  # characters per set-buffer command; keeps control lines short
HUMAN = "human"
_buffer_ids = itertools.count(1)


def as_typed(message: Message) -> str:
    """The text the recipient sees: messages from other agents say who sent them."""
    if message.sender in (HUMAN, "swarm") or message.sender.startswith("reminder:"):
        return message.text
    return f"[message from {message.sender}] {message.text}"


def buffer_lines(name: str, text: str) -> list[str]:
    """Commands that fill tmux buffer `name` with exactly `text`, in bounded pieces."""
    pieces = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]
    lines = [f"set-buffer -b {name} -- {quote(pieces[0])}"]
    lines += [f"set-buffer -a -b {name} -- {quote(p)}" for p in pieces[1:]]
    return lines


class Injector:
    """Delivers each agent's queue; needs the control channel and a way to re-read a screen."""

    def __init__(
        self,
        store: Store,
        control: Callable[[Agent], ControlClient],
        capture: Callable[[Agent], Awaitable[list[str]]],
        notify: Callable[[Message, Agent], None],
        reachable: Callable[[Agent], bool],
    ):
        self._store = store
        self._control = control
        self._capture = capture
        self._notify = notify
        self._reachable = reachable
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, agent: Agent) -> None:
        if agent.name not in self._tasks:
            self._tasks[agent.name] = asyncio.create_task(
                self._run(agent), name=f"inject-{agent.name}")

    def enqueue(self, agent: Agent, message: Message) -> None:
        agent.pending += 1
        agent.inbox.put_nowait(message)
        self._notify(message, agent)

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()

    async def _run(self, agent: Agent) -> None:
        while True:
            message = await agent.inbox.get()
            try:
                await self._wait_ready(agent)
                status, detail = await self._deliver(agent, message)
            except TmuxError as exc:
                # link lost mid-delivery: whether it was typed is unknown, so do not retype
                status, detail = UNCERTAIN, str(exc)
            agent.tracker.typed(time.monotonic())
            self._store.mark(message.id, status, detail)
            agent.pending -= 1
            updated = self._store.message(message.id)
            self._notify(updated or message, agent)

    async def _wait_ready(self, agent: Agent) -> None:
        while not (agent.tracker.ready and self._reachable(agent)):
            agent.changed.clear()
            await agent.changed.wait()

    async def _deliver(self, agent: Agent, message: Message) -> tuple[str, str]:
        control = self._control(agent)
        adapter = agent.adapter
        before = await self._capture(agent)
        draft = adapter.read(before).draft
        if draft:
            # a stale draft would be submitted with our text: clear it first
            await control.run_all(
                [f"send-keys -t {agent.pane} {k}" for k in adapter.clear_draft_keys])
            before = await self._capture(agent)
        self._store.mark(message.id, SENDING)
        name = f"swarm-{os.getpid()}-{next(_buffer_ids)}"
        await control.run_all([
            *buffer_lines(name, adapter.typed_text(as_typed(message))),
            f"paste-buffer -p -r -d -b {name} -t {agent.pane}",
        ])
        # agent TUIs take an Enter that follows fast input as a newline: wait it out
        await asyncio.sleep(adapter.submit_delay)
        await control.run(f"send-keys -t {agent.pane} Enter")
        for attempt in range(2):
            verdict = await self._verify(agent, before, message.text)
            if verdict is None:
                return DELIVERED, "sent (this CLI's screen cannot confirm submission)"
            if verdict:
                return DELIVERED, "" if attempt == 0 else "delivered after one rescue Enter"
            if attempt == 0:
                await control.run(f"send-keys -t {agent.pane} Enter")
        return FAILED, "text still in the input box after one rescue Enter"

    async def _verify(self, agent: Agent, before: list[str], text: str) -> bool | None:
        deadline = time.monotonic() + agent.adapter.verify_timeout
        while True:
            after = await self._capture(agent)
            verdict = agent.adapter.submitted(before, after, text)
            if verdict is None or verdict or time.monotonic() >= deadline:
                return verdict
            await asyncio.sleep(0.05)
