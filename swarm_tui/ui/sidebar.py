"""The sidebar: every agent, its state, quiet time and its one focus label; on a cluster,
grouped by node, each node with its link state and its GPUs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from rich.text import Span, Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from swarm_tui.protocol.models import AgentView, HostView
from swarm_tui.ui.durations import since
from swarm_tui.ui.tiles import STATE_MARKS

STATE_STYLES = {
    "starting": "grey62", "working": "bold green", "idle": "yellow",
    "needs-permission": "bold magenta", "exited": "red", "unreachable": "grey50",
}
BARS = " ▁▂▃▄▅▆▇█"
MIN_NAME = 8  # columns of an agent's name the sidebar keeps before dropping the state word


class Gpu(Protocol):
    """One GPU's telemetry (the protocol's GpuView, or the host link's own reading)."""

    @property
    def util(self) -> int: ...

    @property
    def mem_used(self) -> int: ...

    @property
    def mem_total(self) -> int: ...


def _bar(fraction: float) -> str:
    return BARS[max(0, min(8, round(fraction * 8)))]


def gpu_summary(gpus: Sequence[Gpu]) -> str:
    """One bar per GPU (utilisation), then mean utilisation and memory used / total."""
    if not gpus:
        return ""
    bars = "".join(_bar(g.util / 100) for g in gpus)
    util = sum(g.util for g in gpus) // len(gpus)
    used = sum(g.mem_used for g in gpus) / 1024
    total = sum(g.mem_total for g in gpus) / 1024
    return f"{bars} {util}% {used:.0f}/{total:.0f}G"


def gpu_memory(gpus: Sequence[Gpu]) -> str:
    """One bar per GPU: memory used of that GPU's total."""
    return "".join(_bar(g.mem_used / g.mem_total if g.mem_total else 0) for g in gpus)


def host_line(link: HostView, width: int, now: float) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    if link.connected:
        line.append("■ ", style="green")
        line.append(link.name, style="bold")
        line.append(f"  up {since(link.since, now)}", style="grey62")
        if link.gpus:
            line.append(f"\n   util {gpu_summary(link.gpus)}\n   mem  {gpu_memory(link.gpus)}",
                        style="grey62")
    else:
        line.append("■ ", style="bold red")
        line.append(link.name, style="bold red")
        why = link.detail.removeprefix(f"{link.name}: ")
        line.append(f"  down {since(link.since, now)}: {why}", style="red")
    if not link.gpus:
        line.truncate(width, overflow="ellipsis")
    return line


class Sidebar(Static):
    """Two lines per agent: mark, name, state, quiet time; then the focus label."""

    class Picked(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self._rows: list[str] = []
        self._drawn: tuple[str, list[Span]] | None = None

    def show(self, agents: list[AgentView], selected: str | None, marked: set[str],
             visible: set[str], links: dict[str, HostView],
             notes: dict[str, str] | None = None,
             oldest: dict[str, float] | None = None) -> None:
        """`oldest`: per agent, when its oldest still-queued message was written."""
        now = time.time()
        width = max(10, (self.content_region.width or 30))
        text = Text(no_wrap=True, overflow="ellipsis")
        self._rows = []
        grouped = len(links) > 1 or any(k != "local" for k in links)
        hosts = list(links)
        order = sorted(agents, key=lambda a: hosts.index(a.host) if a.host in hosts
                       else len(hosts)) if grouped else agents
        current_host = None
        for agent in order:
            if grouped and agent.host != current_host:
                current_host = agent.host
                link = links.get(current_host) or HostView(name=current_host, connected=False,
                                                           detail="no word from this host")
                header = host_line(link, width, now)
                text.append_text(header)
                text.append("\n")
                self._rows += [""] * (header.plain.count("\n") + 1)
            text.append_text(self._agent_line(agent, agent.name == selected,
                                              agent.name in marked, agent.name in visible,
                                              width, now, (oldest or {}).get(agent.name)))
            text.append("\n")
            focus = agent.focus or "—"
            if agent.question and agent.state == "needs-permission":
                focus = f"asks: {agent.question}"
            text.append(f"   {focus}"[:width] + "\n", style="italic grey62")
            self._rows += [agent.name, agent.name]
            note = (notes or {}).get(agent.name)
            if note:
                style = "red" if "incomplete" in note or "stopped" in note else "cyan"
                text.append(f"   {note}"[:width] + "\n", style=style)
                self._rows.append(agent.name)
        drawn = (text.plain, list(text.spans))
        if drawn != self._drawn:
            # a new layout only when the number of rows changed (it scrolls with them)
            rows = None if self._drawn is None else self._drawn[0].count("\n")
            self._drawn = drawn
            self.update(text, layout=rows != text.plain.count("\n"))

    @staticmethod
    def _agent_line(agent: AgentView, selected: bool, marked: bool, visible: bool, width: int,
                    now: float, oldest: float | None) -> Text:
        state = agent.state
        style = STATE_STYLES.get(state, "")
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("▶" if selected else ("✓" if marked else " "), style="bold cyan")
        line.append(f"{STATE_MARKS.get(state, '·')} ", style=style)
        queue = ""
        if agent.queued:
            queue = f"✉{agent.queued}" + (f" {since(oldest, now)}" if oldest is not None else "")
        # how long it has waited on a prompt; else how long its screen has been quiet
        waited = agent.state_since if agent.state == "needs-permission" else agent.last_output
        quiet = since(waited, now) if waited is not None else ""
        # the state word goes first when room is short: the mark and colour still say it
        right = " ".join(p for p in (queue, state, quiet) if p)
        if len(right) + 4 + MIN_NAME > width:
            right = " ".join(p for p in (queue, quiet) if p)
        room = max(MIN_NAME, width - len(right) - 4)
        name = agent.name if len(agent.name) <= room else agent.name[: room - 1] + "…"
        line.append(name, style="bold reverse" if selected else ("bold" if visible else ""))
        line.append(" " * max(1, width - line.cell_len - len(right)))
        line.append(right, style=style)
        line.truncate(width, overflow="ellipsis")  # one row, never wrapped
        return line

    def on_click(self, event: events.Click) -> None:
        y = event.y - self.content_region.y + self.region.y + self.scroll_offset.y
        if 0 <= y < len(self._rows) and self._rows[y]:
            self.post_message(self.Picked(self._rows[y]))
