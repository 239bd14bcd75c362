"""One control-mode client per tmux server: commands down one channel, events back.

The channel is any asyncio reader/writer pair: a local `tmux -C` subprocess's pipes, or an
SSH exec channel. Replies are matched to commands first-in first-out, as tmux sends them.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

from swarm_tui.errors import TmuxError
from swarm_tui.tmux.protocol import ControlParser, Event, Exit, Reply

MIN_TMUX = (3, 2)  # pause-after and format subscriptions
# seconds tmux has to answer a command: a server that is stopped (a suspended job), starved
# or blocked keeps its channel open and answers nothing; past this the channel is ended, so
# its host shows unreachable and is reconnected instead of every waiter hanging with it
ANSWER_WITHIN = 15.0


class TmuxCommandError(TmuxError):
    """tmux answered a command with %error."""


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...


class Reader(Protocol):
    async def read(self, n: int) -> bytes: ...


class ControlClient:
    """Send tmux commands and receive their replies and the server's notifications."""

    def __init__(self, reader: Reader, writer: Writer, on_event: Callable[[Event], None]):
        self._reader = reader
        self._writer = writer
        self._on_event = on_event
        self._parser = ControlParser()
        self._pending: deque[asyncio.Future[Reply]] = deque()
        self._asked: deque[float] = deque()  # when each pending command was sent
        self._watch: asyncio.TimerHandle | None = None
        self._attached = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.exit_reason = ""

    async def start(self, timeout: float = 10.0) -> None:
        """Read until tmux has answered the attach; commands before that would fail."""
        self._task = asyncio.create_task(self._read_loop(), name="tmux-control-reader")
        try:
            await asyncio.wait_for(asyncio.shield(self._attached), timeout)
        except TimeoutError:
            raise TmuxError("tmux control client did not attach within 10 s") from None

    async def _read_loop(self) -> None:
        try:
            while True:
                chunk = await self._reader.read(65536)
                if not chunk:
                    break
                for event in self._parser.feed(chunk):
                    self._dispatch(event)
        except Exception as exc:  # noqa: BLE001 - any transport's error (SSH too) ends the channel
            self.exit_reason = str(exc) or type(exc).__name__
        finally:
            self._finish(self.exit_reason or "control channel closed")

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, Reply):
            if not event.from_client:
                if not self._attached.done():
                    self._attached.set_result(None)
                return
            if self._pending:
                fut = self._pending.popleft()
                self._asked.popleft()
                if not fut.done():
                    fut.set_result(event)
            return
        if isinstance(event, Exit):
            self.exit_reason = event.reason or "server exited"
        self._on_event(event)

    def _finish(self, reason: str) -> None:
        if not self._attached.done():
            self._attached.set_exception(TmuxError(f"tmux control client exited: {reason}"))
        self._asked.clear()
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        while self._pending:
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_exception(TmuxError(f"tmux connection lost: {reason}"))
        if not self.closed.is_set():
            self.closed.set()
            self._on_event(Exit(reason))

    async def send(self, lines: Iterable[str]) -> list[asyncio.Future[Reply]]:
        """Write command lines at once; return one future per command, in order."""
        if self.closed.is_set():
            raise TmuxError(f"tmux connection lost: {self.exit_reason}")
        loop = asyncio.get_running_loop()
        futs: list[asyncio.Future[Reply]] = []
        data = bytearray()
        now = loop.time()
        for line in lines:
            if "\n" in line:
                raise ValueError("a control-mode command must be one line")
            fut: asyncio.Future[Reply] = loop.create_future()
            self._pending.append(fut)
            self._asked.append(now)
            futs.append(fut)
            data += line.encode("utf-8") + b"\n"
        if self._watch is None and futs:
            self._watch = loop.call_at(now + ANSWER_WITHIN, self._check_answers)
        self._writer.write(bytes(data))
        await self._writer.drain()
        return futs

    def _check_answers(self) -> None:
        """The oldest command unanswered for ANSWER_WITHIN ends the channel; else look
        again when the oldest one's time is up (no timer while nothing is pending)."""
        self._watch = None
        if not self._asked or self.closed.is_set():
            return
        loop = asyncio.get_running_loop()
        due = self._asked[0] + ANSWER_WITHIN
        if loop.time() < due:
            self._watch = loop.call_at(due, self._check_answers)
            return
        self.exit_reason = f"tmux did not answer for {ANSWER_WITHIN:g} s"
        self._writer.close()  # a local client sees its stdin end; an SSH channel closes
        if self._task is not None:
            self._task.cancel()
        self._finish(self.exit_reason)

    async def run(self, line: str) -> Reply:
        """Run one command; raise TmuxCommandError if tmux answers %error."""
        (fut,) = await self.send([line])
        reply = await fut
        if not reply.ok:
            raise TmuxCommandError(f"tmux: {reply.text()} (command: {line[:80]})")
        return reply

    async def run_all(self, lines: list[str]) -> list[Reply]:
        """Run commands pipelined; raise on the first %error after all have answered."""
        replies = [await f for f in await self.send(lines)]
        for line, reply in zip(lines, replies, strict=True):
            if not reply.ok:
                raise TmuxCommandError(f"tmux: {reply.text()} (command: {line[:80]})")
        return replies

    async def close(self) -> None:
        if not self.closed.is_set():
            try:
                self._writer.write(b"detach-client\n")
                # a dead link never drains: never wait on it for long
                await asyncio.wait_for(self._writer.drain(), 2)
            except (OSError, RuntimeError, TimeoutError):
                pass
            try:
                await asyncio.wait_for(self.closed.wait(), 2)
            except TimeoutError:
                pass
        self._writer.close()
        if self._task:
            self._task.cancel()


def parse_version(text: str) -> tuple[int, int]:
    """`tmux 3.3a` -> (3, 3); `tmux next-3.4` -> (3, 4)."""
    m = re.search(r"(\d+)\.(\d+)", text)
    if not m:
        raise TmuxError(f"cannot read the tmux version from {text.strip()!r}")
    return int(m.group(1)), int(m.group(2))
