"""The sidebar: every agent of the fleet, its state, quiet time and its one focus label."""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from swarm_tui.fleet.agent import Agent
from swarm_tui.ui.tiles import STATE_MARKS

STATE_STYLES = {
    "starting": "grey62", "working": "bold green", "idle": "yellow",
    "needs-permission": "bold magenta", "exited": "red",
}


def quiet_for(ts: float, now: float) -> str:
    secs = max(0, int(now - ts))
    if secs < 60:
        return f"{secs}s"
    if secs < 3600:
        return f"{secs // 60}m"
    return f"{secs // 3600}h"


class Sidebar(Static):
    """Two lines per agent: mark, name, state, quiet time; then the focus label."""

    class Picked(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self._rows: list[str] = []

    def show(self, agents: list[Agent], selected: str | None, marked: set[str],
             visible: set[str], note: str = "") -> None:
        now = time.time()
        width = max(10, (self.content_region.width or 30))
        text = Text(no_wrap=True, overflow="ellipsis")
        self._rows = []
        if note:
            text.append(note + "\n", style="bold red")
            self._rows.append("")
        for agent in agents:
            state = agent.state.value
            is_sel = agent.name == selected
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append("▶" if is_sel else ("✓" if agent.name in marked else " "),
                        style="bold cyan")
            line.append(f"{STATE_MARKS[state]} ", style=STATE_STYLES[state])
            right = f"{state} {quiet_for(agent.last_output_wall, now)}"
            if agent.pending:
                right = f"✉{agent.pending} " + right
            room = max(4, width - len(right) - 4)
            name = agent.name if len(agent.name) <= room else agent.name[: room - 1] + "…"
            line.append(name, style="bold reverse" if is_sel else
                        ("bold" if agent.name in visible else ""))
            pad = max(1, width - line.cell_len - len(right))
            line.append(" " * pad)
            line.append(right, style=STATE_STYLES[state])
            text.append_text(line)
            text.append("\n")
            focus = agent.focus or "—"
            if agent.tracker.reading.question and state == "needs-permission":
                focus = f"asks: {agent.tracker.reading.question}"
            text.append(f"   {focus}"[:width] + "\n", style="italic grey62")
            self._rows += [agent.name, agent.name]
        self.update(text)

    def on_click(self, event: events.Click) -> None:
        y = event.y - self.content_region.y + self.region.y + self.scroll_offset.y
        if 0 <= y < len(self._rows) and self._rows[y]:
            self.post_message(self.Picked(self._rows[y]))
