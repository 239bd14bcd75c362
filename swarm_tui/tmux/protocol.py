"""A pure parser of tmux control-mode output: bytes in, typed events out.

Replies arrive as `%begin <time> <n> <flags>` ... `%end|%error` blocks in the order commands
were sent; lines inside a block may themselves start with `%`. Everything outside a block is
a notification. `%output` data escapes bytes < 0x20 and `\\` as three octal digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_OCTAL = re.compile(rb"\\([0-7]{3})")


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to one command: `ok` is False for `%error`."""

    number: int
    ok: bool
    lines: tuple[bytes, ...]
    from_client: bool  # flags bit 1: a command this client sent (the attach's block has 0)

    def text(self) -> str:
        return "\n".join(line.decode("utf-8", "replace") for line in self.lines)


@dataclass(slots=True)  # not frozen: made hundreds of times a second, and frozen costs
class Output:
    """A pane wrote something. The engine only needs the doorbell, so the bytes stay as tmux
    escaped them (`raw`) until someone asks for `data`."""

    pane: str
    raw: bytes

    @property
    def data(self) -> bytes:
        return unescape(self.raw)


@dataclass(frozen=True, slots=True)
class Pause:
    """tmux stopped sending a pane's output (pause-after); it needs a resync and continue."""

    pane: str


@dataclass(frozen=True, slots=True)
class WindowClose:
    window: str


@dataclass(frozen=True, slots=True)
class SubscriptionChanged:
    name: str
    window: str
    pane: str
    value: str


@dataclass(frozen=True, slots=True)
class Exit:
    """The control client is detached: server gone, session killed, or kicked."""

    reason: str


@dataclass(frozen=True, slots=True)
class Notification:
    """Any other `%name args` line (window-add, session-changed, ...)."""

    name: str
    args: tuple[str, ...]


Event = Reply | Output | Pause | WindowClose | SubscriptionChanged | Exit | Notification


def unescape(data: bytes) -> bytes:
    return _OCTAL.sub(lambda m: bytes([int(m.group(1), 8)]), data)


@dataclass
class ControlParser:
    """Feed it chunks as they come; it yields complete events."""

    _buf: bytearray = field(default_factory=bytearray)
    _block: list[bytes] | None = None
    _block_head: tuple[int, bool] = (0, False)

    def feed(self, chunk: bytes) -> Iterator[Event]:
        if b"\n" not in chunk:
            self._buf += chunk
            return
        # the chunk cut into lines at once (a capture's reply is dozens of them), the
        # unfinished last one kept for the next chunk
        *lines, rest = (bytes(self._buf) + chunk if self._buf else chunk).split(b"\n")
        self._buf = bytearray(rest)
        for line in lines:
            event = self._line(line[:-1] if line.endswith(b"\r") else line)
            if event is not None:
                yield event

    def _line(self, line: bytes) -> Event | None:
        if self._block is not None:
            if line.startswith((b"%end ", b"%error ")):
                parts = line.split(b" ")
                # a screen captured inside the block may show "%end of story": only a
                # well-formed line with this block's number ends it
                if len(parts) >= 3 and parts[2].isdigit() and int(parts[2]) == self._block_head[0]:
                    lines, self._block = tuple(self._block), None
                    number, from_client = self._block_head
                    return Reply(number, line.startswith(b"%end"), lines, from_client)
            self._block.append(line)
            return None
        if line.startswith(b"%begin "):
            parts = line.split(b" ")
            flags = int(parts[3]) if len(parts) > 3 else 1
            self._block = []
            self._block_head = (int(parts[2]), bool(flags & 1))
            return None
        return notification(line)


def notification(line: bytes) -> Event | None:
    if not line.startswith(b"%"):
        return None
    if line.startswith(b"%output "):
        _, pane, data = line.split(b" ", 2) if line.count(b" ") >= 2 else (b"", line[8:], b"")
        return Output(pane.decode(), data)
    if line.startswith(b"%extended-output "):
        head, sep, data = line.partition(b" : ")
        return Output(head.split(b" ")[1].decode(), data if sep else b"")
    text = line.decode("utf-8", "replace")
    name, _, rest = text[1:].partition(" ")
    if name == "pause":
        return Pause(rest.strip())
    if name in ("window-close", "unlinked-window-close"):
        return WindowClose(rest.strip())
    if name == "exit":
        return Exit(rest.strip())
    if name == "subscription-changed":
        sub_head, _, value = rest.partition(" : ")
        parts = sub_head.split(" ")
        # name $session @window index %pane ...
        if len(parts) >= 5:
            return SubscriptionChanged(parts[0], parts[2], parts[4], value)
    return Notification(name, tuple(rest.split(" ")) if rest else ())
