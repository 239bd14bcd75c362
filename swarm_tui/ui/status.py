"""The status line under the tiles: the page, the fleet counted by state (the states that
need a human first, each in its colour), hosts down, marks and zoom."""

from __future__ import annotations

from collections import Counter

from rich.text import Text

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import AgentView

STATE_COUNTS = (("needs-permission", "need you"), ("exited", "exited"), ("working", "working"),
                ("idle", "idle"), ("starting", "starting"), ("unreachable", "unreachable"))


def matches(agent: AgentView, words: list[str]) -> bool:
    """Whether every word (any case) is in the agent's name, role, state, host or focus."""
    hay = " ".join((agent.name, agent.role, agent.state, agent.host, agent.focus)).casefold()
    return all(w.casefold() in hay for w in words)


def status_line(view: FleetView, page: int, pages: int, marked: int, zoomed: bool,
                colours: dict[str, str], filtered: tuple[str, int] | None = None) -> Text:
    """`filtered`: the filter's text and how many agents pass it."""
    line = Text(f" page {page + 1}/{pages} · {len(view.agents)} agents", no_wrap=True,
                overflow="ellipsis")
    if filtered is not None:
        line.append(f" · filter {filtered[0]!r}: {filtered[1]} shown (/ to change)",
                    style="bold")
    counts = Counter(a.state for a in view.agents.values())
    for state, word in STATE_COUNTS:
        if counts[state]:
            line.append(" · ")
            line.append(f"{counts[state]} {word}", style=colours.get(state, ""))
    down = sum(not h.connected for h in view.hosts.values())
    if down:
        line.append(" · ")
        line.append(f"{down} host{'s' if down > 1 else ''} down", style="bold red")
    if marked:
        line.append(f" · {marked} marked")
    if zoomed:
        line.append(" · zoomed (enter to return)")
    return line
