"""A fleet listener that keeps what the engine tells the human, for tests to read."""

from __future__ import annotations

from swarm_tui.fleet.events import NullListener


class Notices(NullListener):
    """Every `notice` line, in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def notice(self, text: str) -> None:
        self.lines.append(text)
