"""The fleet view's changes into the UI: remember what changed, and wake the app's frame
timer, which draws them in batches (and sleeps while nothing changes)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from swarm_tui.protocol.models import MessageView

_LINE = re.compile(r":(\d+):\s*")


@dataclass(frozen=True)
class LayoutNote:
    """The last edit of the layout file was refused (or half applied): why, one problem per
    line, as the layout loader wrote them."""

    problems: tuple[str, ...]
    partly: bool = False

    def line(self, path: Path, width: int = 0) -> str:
        """One line for the screen: the file by name, the first problem (cut to fit `width`
        when given), how many more."""
        first = self.problems[0] if self.problems else "(no reason given)"
        before, found, after = first.partition(path.name)
        if found and (not before or before.endswith("/")):
            number = _LINE.match(after)
            first = (
                f"line {number[1]}: {after[number.end() :]}"
                if number
                else after.removeprefix(":").strip()
            )
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        what = "partly applied" if self.partly else "not applied"
        head = f"⚠ layout {path.name}: {what}: "
        room = width - len(head) - len(more)
        if width and len(first) > room:
            if room < 12:  # no room for any of the problem: say how many
                return f"⚠ layout {path.name}: {what} ({len(self.problems)} problems)"
            first = first[: room - 1] + "…"
        return f"{head}{first}{more}"


class UiBridge:
    """The client's ViewListener: it only records; nothing here touches a widget."""

    def __init__(self) -> None:
        self.screens: set[str] = set()
        self.agents: set[str] = set()
        self.messages: list[MessageView] = []
        self.hosts: set[str] = set()
        self.notices: list[str] = []
        self.work = False
        self.relayout = False
        self.layout_note: LayoutNote | None = None
        self.layout_note_changed = False
        self.end: tuple[str, bool] | None = None  # why the fleet ended, and if deliberately
        self.lost: str | None = None  # why the engine's stream broke, until it is back
        self.wake: Callable[[], None] = _nothing  # the app's frame timer, set going
        # a new screen goes to its tile at once (Textual's own frame batches the drawing):
        # one timer less between an agent's line and the terminal
        self.on_screen: Callable[[str], None] | None = None

    def pending(self) -> bool:
        """Whether anything waits to be drawn."""
        return bool(
            self.screens
            or self.agents
            or self.messages
            or self.hosts
            or self.notices
            or self.work
            or self.relayout
            or self.layout_note_changed
            or self.end is not None
        )

    def agent_changed(self, name: str) -> None:
        self.agents.add(name)
        self.wake()

    def screen_changed(self, name: str) -> None:
        if self.on_screen is not None:
            self.on_screen(name)
            return
        self.screens.add(name)
        self.wake()

    def message_changed(self, message: MessageView) -> None:
        self.messages.append(message)
        self.wake()

    def host_changed(self, name: str) -> None:
        self.hosts.add(name)
        self.wake()

    def work_changed(self) -> None:
        self.work = True
        self.wake()

    def notice(self, text: str) -> None:
        self.notices.append(text)
        self.wake()

    def layout_changed(self) -> None:
        self.relayout = True
        self.layout_applied()  # the engine says this only after an edit was applied
        self.wake()

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        """An edit of the layout file was not applied (or only in part): keep saying why."""
        self.set_layout_note(LayoutNote(tuple(p for p in problems if p.strip()), partly))

    def set_layout_note(self, note: LayoutNote | None) -> None:
        if note != self.layout_note:
            self.layout_note = note
            self.layout_note_changed = True
        self.wake()

    def layout_applied(self) -> None:
        """A valid edit was applied: the note of an earlier invalid one goes."""
        self.set_layout_note(None)

    def ended(self, reason: str, deliberate: bool) -> None:
        self.end = (reason, deliberate)
        self.wake()

    def disconnected(self, reason: str) -> None:
        self.lost = reason
        self.wake()


def _nothing() -> None:
    pass
