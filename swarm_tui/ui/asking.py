"""How the view shows a permission dialog it can answer: a banner at the bottom of the
agent's tile (the question, then its numbered options and the keys that answer them), the
question in the sidebar, and how long the agent has waited.

The banner goes into the tile as two captured-looking lines (ANSI colours, never markup), so
the tile draws it like the agent's own screen. `y` picks the dialog's first yes-like option,
`n` its no, a number that option; `t` attaches for anything more.
"""

from __future__ import annotations

from swarm_tui.protocol.models import AgentView

ASKING = "needs-permission"
LABEL_MAX = 24  # characters of one option's label in the banner


def asking(agent: AgentView | None) -> bool:
    return agent is not None and agent.state == ASKING


def short(label: str, width: int = LABEL_MAX) -> str:
    """An option's label, cut to `width` (the whole one is in the agent's own screen)."""
    return label if len(label) <= width else label[: width - 1].rstrip(" ,") + "…"


def options_line(agent: AgentView) -> str:
    """`1 Yes · 2 Yes, and don't ask… · 3 No`, or what to do when none could be read."""
    if not agent.options:
        return "its options cannot be read here: t attaches to answer it"
    return " · ".join(f"{key} {short(label)}" for key, label in agent.options)


def sgr(colour: str) -> str:
    """A theme colour (`#rrggbb`) as the SGR parameters of a background, with dark text."""
    hexa = colour.lstrip("#")
    if len(hexa) < 6:
        return "1;7"  # not a hex colour: reverse video says the same
    r, g, b = (int(hexa[i : i + 2], 16) for i in (0, 2, 4))
    return f"1;38;2;0;0;0;48;2;{r};{g};{b}"


def keys_of(agent: AgentView) -> str:
    """The keys that answer it: `y/n/1-3` (`t` alone when its options cannot be read)."""
    n = len(agent.options)
    return "y/n/1" if n == 1 else f"y/n/1-{n}" if n else "t"


def banner(agent: AgentView | None, colour: str) -> list[str]:
    """The tile's banner for an agent waiting on a dialog ([] for any other): the question,
    then the keys and the options (keys first: a narrow tile cuts the end), each a
    full-width bar in `colour` (the state's colour)."""
    if agent is None or not asking(agent):
        return []
    style = f"\x1b[{sgr(colour)}m"
    pad = " " * 400  # to the tile's edge: the tile crops the line to its width
    question = agent.question or "it asks for a choice"
    attach = " · t attaches" if agent.options else ""
    return [f"{style} ? {question}{pad}\x1b[0m",
            f"{style} [{keys_of(agent)}] {options_line(agent)}{attach}{pad}\x1b[0m"]


def sidebar_note(agent: AgentView) -> str:
    """The sidebar's line under an asking agent: the keys that answer, what it asks."""
    return f"[{keys_of(agent)}] asks: {agent.question or 'a choice'}"
