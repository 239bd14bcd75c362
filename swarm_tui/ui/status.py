"""The status line under the tiles: the page (zoomed: the agent's place), the fleet counted
by state (each in its colour), hosts down, marks and zoom; fitted to its width, the states
that need a human kept first."""

from __future__ import annotations

from collections import Counter

from rich.text import Text

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.fit import Part, fit

HINTS = 20  # the rank of a hint (`(/ to change)`): it goes before anything else
# each state's count: its word and its rank on a short line (0 is kept longest)
STATE_COUNTS = (
    ("needs-permission", "need you", 1),
    ("exited", "exited", 5),
    ("working", "working", 7),
    ("idle", "idle", 8),
    ("starting", "starting", 9),
    ("unreachable", "unreachable", 6),
)


def matches(agent: AgentView, words: list[str]) -> bool:
    """Whether every word (any case) is in the agent's name, role, state, host or focus."""
    hay = " ".join((agent.name, agent.role, agent.state, agent.host, agent.focus)).casefold()
    return all(w.casefold() in hay for w in words)


def status_line(
    view: FleetView,
    where: str,
    marked: int,
    zoomed: bool,
    colours: dict[str, str],
    filtered: tuple[str, int] | None = None,
    width: int = 0,
) -> Text:
    """The line in `width` cells (0: any): `where` is the page (`page 2/3`) or, zoomed, the
    agent's place (`agent 4/12`); `filtered`, the filter's text and how many agents pass
    it. What needs a human keeps its room; hints shorten, then the plain counts go."""
    parts = [Part((where,), 0), Part((f"{len(view.agents)} agents", ""), 10)]
    if filtered is not None:
        text, shown = filtered
        parts.append(
            Part(
                (
                    f"filter {text!r}: {shown} shown (/ to change)",
                    f"filter {text!r}: {shown} shown",
                    f"filtered: {shown} shown",
                ),
                (HINTS, 2),
                "bold",
            )
        )
    counts = Counter(a.state for a in view.agents.values())
    for state, word, rank in STATE_COUNTS:
        if counts[state]:
            parts.append(Part((f"{counts[state]} {word}", ""), rank, colours.get(state, "")))
    down = sum(not h.connected for h in view.hosts.values())
    if down:
        parts.append(Part((f"{down} host{'s' if down > 1 else ''} down",), 1, "bold red"))
    if marked:
        parts.append(Part((f"{marked} marked", ""), 4))
    if zoomed:
        parts.append(Part(("zoomed (enter to return)", "zoomed", ""), (HINTS, 3)))
    return fit(parts, width, lead=" ")
