"""Typing messages into agents as real user input, in order, verified, one agent at a time.

Each agent has one ordered queue. A message is journaled before it is typed; it waits until
the agent's input box is ready; its text goes into a uniquely named tmux buffer through the
control channel (never argv or a shell) and is pasted with bracketed paste; Enter follows
separately after the adapter's delay; once the CLI has drawn something since the paste, the
screen is read back to confirm the box emptied, with at most one rescue Enter.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import time
from collections.abc import Awaitable, Callable

from swarm_tui.errors import SwarmError, TmuxError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import (
    CANCELLED,
    DELIVERED,
    FAILED,
    QUEUED,
    SENDING,
    UNCERTAIN,
    Message,
    Store,
)
from swarm_tui.tmux.client import ControlClient, TmuxCommandError
from swarm_tui.tmux.commands import quote

CHUNK_CHARS = 4000  # characters per set-buffer command; keeps control lines short
RECHECK = 2.0  # seconds: a waiting queue re-reads the screen at least this often
CLEAR_WAIT = 1.5  # seconds for a cleared draft to leave the screen
REACT_WAIT = 30.0  # seconds for a CLI to draw anything once its message is typed
REACT_NOTE = 3.0  # seconds without a redraw before the message's detail says so
DRAFT_RETRY = 15.0  # seconds before trying again to clear a draft that would not clear
RESTART_MIN, RESTART_MAX = 1.0, 30.0  # seconds between restarts of a failing queue
NOTICE_EVERY = 60.0  # seconds: a queue that keeps failing says so at most this often
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


class _GoesFirst(Exception):
    """A message queued to go first came while another waited for the agent: that one
    waits again, right after it."""


class _NotTyped(Exception):
    """The link failed before anything was typed: the message waits for it, still queued."""


class DraftStuck(SwarmError):
    """The input box holds text that the adapter's keys did not clear."""


class Injector:
    """Delivers each agent's queue; needs the control channel and a way to re-read a screen.

    `typed` is told when a message was submitted (the agent is busy from then on); `obsolete`
    says why a message no longer applies (its task is complete, the stall it was about is
    over), or "" to type it; `notice` tells the human about a queue that is stuck.
    """

    def __init__(
        self,
        store: Store,
        control: Callable[[Agent], ControlClient],
        capture: Callable[[Agent], Awaitable[list[str]]],
        notify: Callable[[Message, Agent], None],
        reachable: Callable[[Agent], bool],
        typed: Callable[[Agent], None],
        obsolete: Callable[[Agent, Message], str],
        notice: Callable[[str], None],
    ):
        self._store = store
        self._control = control
        self._capture = capture
        self._notify = notify
        self._reachable = reachable
        self._typed = typed
        self._obsolete = obsolete
        self._notice = notice
        self._tasks: dict[str, tuple[Agent, asyncio.Task[None]]] = {}
        self._delivering: dict[str, Agent] = {}  # whose message is being typed right now
        self._retired: set[Agent] = set()  # left the fleet: stop after the current message
        self._held: dict[str, Message] = {}  # per agent: its message whose handling failed
        self._outcome: dict[int, tuple[str, str]] = {}  # typed; status not yet journaled
        self._firsts: set[int] = set()  # ids of the messages queued to go first
        # queues of agents that left while typing: one of that name that comes back waits
        self._leaving: dict[str, asyncio.Task[None]] = {}

    def start(self, agent: Agent) -> None:
        """Run the agent's queue. An agent of the same name that left the fleet (live
        reload) has its old queue retired first, so only one queue types into a pane."""
        known = self._tasks.get(agent.name)
        previous = self._leaving.pop(agent.name, None)  # it left and is back: after that one
        if known is not None:
            if known[0] is agent and not known[1].done():
                return
            previous = self._retire(*known)
        self._tasks[agent.name] = (
            agent,
            asyncio.create_task(self._supervise(agent, previous), name=f"inject-{agent.name}"),
        )

    def forget(self, agent: Agent) -> None:
        """Stop the queue of an agent that left the fleet; what it still holds stays queued
        in the journal (for the agent's return). A message being typed is finished first."""
        known = self._tasks.get(agent.name)
        if known is not None and known[0] is agent:
            leaving = self._retire(*known)
            if not leaving.done():
                self._leaving[agent.name] = leaving
                leaving.add_done_callback(functools.partial(self._left, agent.name))
            del self._tasks[agent.name]

    def _left(self, name: str, task: asyncio.Task[None]) -> None:
        if self._leaving.get(name) is task:
            del self._leaving[name]

    def _retire(self, agent: Agent, task: asyncio.Task[None]) -> asyncio.Task[None]:
        self._held.pop(agent.name, None)  # still queued in the journal: resumed from there
        if agent.name in self._delivering and self._delivering[agent.name] is agent:
            self._retired.add(agent)  # its loop ends after the message it is typing
        else:
            task.cancel()
        return task

    def enqueue(self, agent: Agent, message: Message) -> None:
        agent.pending += 1
        agent.waiting[message.id] = message.created
        agent.inbox.put_nowait(message)
        self._notify(message, agent)

    def enqueue_first(self, agent: Agent, message: Message) -> None:
        """Queue a message to be typed before everything queued already (what a restarted
        agent must read before its backlog: its focus and task)."""
        agent.first.append(message)
        self._firsts.add(message.id)
        self.enqueue(agent, message)  # the inbox's copy wakes the queue; it is skipped once
        agent.changed.set()  # a queue waiting for the agent looks again now

    async def stop(self) -> None:
        tasks = [t for _, t in self._tasks.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    async def _supervise(self, agent: Agent, previous: asyncio.Task[None] | None) -> None:
        """A queue that dies is restarted and said so, never silently stopped. The message
        it was handling is tried again first (a full disk that frees up, say); one that was
        already typed only has its status recorded, never typed again."""
        if previous is not None:  # the retired queue of an agent of this name
            await asyncio.wait([previous])
        delay, told = RESTART_MIN, 0.0
        while agent not in self._retired:
            try:
                await self._run(agent)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: log it, keep delivering
                if time.monotonic() - told > NOTICE_EVERY:
                    self._notice(
                        f"{agent.name}: message queue failed ({exc}); it retries by itself"
                    )
                    told = time.monotonic()
                await asyncio.sleep(delay)
                delay = min(delay * 2, RESTART_MAX)

    async def _run(self, agent: Agent) -> None:
        while agent not in self._retired:
            message = (
                (agent.first.popleft() if agent.first else None)
                or self._held.pop(agent.name, None)
                or await agent.inbox.get()
            )
            if message.id not in agent.waiting:
                continue  # the inbox's copy of a message typed first
            try:
                settled = await self._one(agent, message)
            except _GoesFirst:
                self._held[agent.name] = message  # right after what must go first
                continue
            except Exception:
                self._held[agent.name] = message  # first again when the queue restarts
                raise
            agent.pending -= 1
            agent.waiting.pop(message.id, None)
            self._firsts.discard(message.id)
            self._notify(settled, agent)  # after the count: watchers see the queue as it is

    async def _one(self, agent: Agent, message: Message) -> Message:
        """Deliver one message (or settle it); returns its journal row as it ends."""
        if message.id in self._outcome:  # typed before its status could be written
            return self._record(agent, message, *self._outcome[message.id])
        warned = False
        while True:
            await self._wait_ready(agent)
            if agent.first and message.id not in self._firsts:
                raise _GoesFirst
            now = self._store.message(message.id)
            if now is not None and now.status == SENDING:  # a failed try was typing it
                self._store.mark(
                    message.id, UNCERTAIN, "its typing was interrupted; it is never typed twice"
                )
                return self._store.message(message.id) or now
            if now is not None and now.status != QUEUED:
                return now  # settled meanwhile: the queue of this name before it typed it
            why = self._obsolete(agent, message)
            if why:
                self._store.mark(message.id, CANCELLED, why)
                break
            self._delivering[agent.name] = agent
            try:
                status, detail = await self._deliver(agent, message)
            except DraftStuck as exc:
                # typing now would submit the draft with our text: wait for the box to clear
                if not warned:
                    self._notice(
                        f"{agent.name}: {exc}; message #{message.id} waits (clear "
                        f"the box: `swarm attach {agent.name}`)"
                    )
                    warned = True
                await self._wait_changed(agent, DRAFT_RETRY)
                continue
            except _NotTyped:
                continue  # it waits for the link to be back, queued
            except TmuxError as exc:
                # link lost mid-delivery: whether it was typed is unknown, so do not retype
                status, detail = UNCERTAIN, str(exc)
            finally:
                if self._delivering.get(agent.name) is agent:
                    del self._delivering[agent.name]
            self._outcome[message.id] = (status, detail)
            self._typed(agent)
            return self._record(agent, message, status, detail)
        return self._store.message(message.id) or message

    def _record(self, agent: Agent, message: Message, status: str, detail: str) -> Message:
        self._store.mark(message.id, status, detail)
        del self._outcome[message.id]
        return self._store.message(message.id) or message

    async def _wait_ready(self, agent: Agent) -> None:
        """Until the input box is ready. Never only on an event that may not come: the
        screen is re-read on a deadline (a hook may have said idle before the screen did)."""
        while not (agent.tracker.ready and self._reachable(agent)):
            if not await self._wait_changed(agent, RECHECK) and self._reachable(agent):
                try:
                    await self._capture(agent)
                except SwarmError:
                    pass  # the link's own events say what went wrong

    @staticmethod
    async def _wait_changed(agent: Agent, timeout: float) -> bool:
        agent.changed.clear()
        try:
            await asyncio.wait_for(agent.changed.wait(), timeout)
            return True
        except TimeoutError:
            return False

    async def _deliver(self, agent: Agent, message: Message) -> tuple[str, str]:
        try:
            control = self._control(agent)
            before = await self._ready_box(agent, control)
        except TmuxCommandError:
            raise  # tmux answered, with an error: not the link
        except TmuxError as exc:
            raise _NotTyped from exc
        if not self._reachable(agent):  # it went while we looked (its screen is the last)
            raise _NotTyped
        return await self._type(agent, control, message, before)

    async def _ready_box(self, agent: Agent, control: ControlClient) -> list[str]:
        """The screen with an empty input box (a stale draft is cleared first)."""
        adapter = agent.adapter
        before = await self._capture(agent)
        draft = adapter.read(before).draft
        if draft:
            # a stale draft would be submitted with our text: clear it first
            await control.run_all(
                [f"send-keys -t {agent.pane} {k}" for k in adapter.clear_draft_keys]
            )
            deadline = time.monotonic() + CLEAR_WAIT  # the CLI redraws in its own time
            while True:
                before = await self._capture(agent)
                left = adapter.read(before).draft
                if not left:
                    break
                if time.monotonic() >= deadline:
                    raise DraftStuck(
                        f"the input box holds a draft that would not clear ({left[:40]!r})"
                    )
                await asyncio.sleep(0.05)
        return before

    async def _type(
        self, agent: Agent, control: ControlClient, message: Message, before: list[str]
    ) -> tuple[str, str]:
        """Paste the text and Enter, then read back whether the CLI took it."""
        adapter = agent.adapter
        self._store.mark(message.id, SENDING)
        name = f"swarm-{os.getpid()}-{next(_buffer_ids)}"
        await control.run_all(
            [
                *buffer_lines(name, adapter.typed_text(as_typed(message))),
                f"paste-buffer -p -r -d -b {name} -t {agent.pane}",
            ]
        )
        # agent TUIs take an Enter that follows fast input as a newline: wait it out
        await asyncio.sleep(adapter.submit_delay)
        await control.run(f"send-keys -t {agent.pane} Enter")
        if adapter.read(before).draft is not None and not await self._reacted(
            agent, before, message.id
        ):
            return UNCERTAIN, (
                f"the screen did not change in {REACT_WAIT:.0f} s after the "
                f"message was typed (is the CLI running?)"
            )
        for attempt in range(2):
            # a loaded machine redraws late: the rescue Enter's wait is twice the first
            verdict, after = await self._verify(agent, before, message.text, 1 + attempt)
            if verdict is None:
                return DELIVERED, "sent (this CLI's screen cannot confirm submission)"
            if verdict:
                return DELIVERED, "" if attempt == 0 else "delivered after one rescue Enter"
            if attempt == 0:
                await control.run(f"send-keys -t {agent.pane} Enter")
        if (agent.adapter.read(after).draft or "").strip():
            return FAILED, "text still in the input box after one rescue Enter"
        # the box is empty but the screen never showed the turn: typed, fate unknown
        return UNCERTAIN, "the input box emptied but the screen did not show the message taken"

    async def _reacted(self, agent: Agent, before: list[str], message_id: int) -> bool:
        """Whether the CLI drew anything since `before` (the screen ahead of the paste).

        A CLI that is not running (a starved machine, a stopped node) shows the screen of
        before with an empty box, which is no sign the message was taken; when it runs again
        it reads the paste and the Enter at once and takes that Enter as a newline. So no
        verdict, and no rescue Enter that would join them, until it has drawn something."""
        start = time.monotonic()
        noted = False
        while await self._capture(agent) == before:
            waited = time.monotonic() - start
            if waited >= REACT_WAIT:
                return False
            if waited >= REACT_NOTE and not noted:  # `swarm messages` says why it waits
                self._store.mark(
                    message_id, SENDING, "typed; the CLI has not redrawn since (is it running?)"
                )
                noted = True
            await asyncio.sleep(0.05)
        return True

    async def _verify(
        self, agent: Agent, before: list[str], text: str, scale: float
    ) -> tuple[bool | None, list[str]]:
        deadline = time.monotonic() + agent.adapter.verify_timeout * scale
        # None is final only for a CLI whose box this adapter cannot read at all; one whose
        # box it read before typing is between two frames (a redraw, `/new` clearing the
        # screen): look again until the deadline
        readable = agent.adapter.read(before).draft is not None
        while True:
            after = await self._capture(agent)
            verdict = agent.adapter.submitted(before, after, text)
            if verdict or (verdict is None and not readable) or time.monotonic() >= deadline:
                return verdict, after
            await asyncio.sleep(0.05)
