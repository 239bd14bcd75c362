"""How the view shows a permission dialog it can answer: a banner at the bottom of the
agent's tile (the question, then its numbered options and the keys that answer them), the
question in the sidebar, and how long the agent has waited.

The banner goes into the tile as two captured-looking lines (ANSI colours, never markup), so
the tile draws it like the agent's own screen. `y` picks the dialog's first yes-like option,
`n` its no, a number that option; `t` attaches for anything more.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.fit import ELLIPSIS, clip

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


def banner(agent: AgentView | None, colour: str, width: int = 400) -> list[str]:
    """The tile's banner for an agent waiting on a dialog ([] for any other): the question,
    then the keys and the options (keys first), each a full-width bar in `colour` (the
    state's colour), fitted to `width` cells at a word's end (`t attaches` goes first)."""
    if agent is None or not asking(agent):
        return []
    style = f"\x1b[{sgr(colour)}m"
    pad = " " * 400  # to the tile's edge: the tile crops the line to its width
    question = clip(f" ? {agent.question or 'it asks for a choice'}", width)
    options = f" [{keys_of(agent)}] {options_line(agent)}"
    attach = " · t attaches" if agent.options else ""
    if cell_len(options + attach) <= width:
        options += attach
    return [f"{style}{question}{pad}\x1b[0m", f"{style}{clip(options, width)}{pad}\x1b[0m"]


def sidebar_note(agent: AgentView) -> str:
    """The sidebar's line under an asking agent: the keys that answer, what it asks."""
    return f"[{keys_of(agent)}] asks: {agent.question or 'a choice'}"


def _cut_at_edge(label: str, screen: list[str]) -> bool:
    """Whether `label` ends a line that runs to the right edge of the agent's window (as
    wide as its widest lines, a rule or a box's border): the window cut it off there."""
    plain = [Text.from_ansi(line).plain.rstrip() for line in screen]
    lines = [(text, cell_len(text)) for text in plain]
    edge = max((w for _, w in lines), default=0)
    at_edge = [text for text, w in lines if w == edge]
    return edge > 0 and len(at_edge) > 1 and any(t.endswith(label) for t in at_edge)


def shown_options(agent: AgentView, screen: list[str]) -> list[tuple[str, str]]:
    """The agent's options as its screen shows them; a label the window cut off loses its
    last (likely partial) word and ends with `…` (`screen`: the agent's captured lines)."""
    return [
        (key, _word_cut(label) if label and _cut_at_edge(label, screen) else label)
        for key, label in agent.options
    ]


def _word_cut(label: str) -> str:
    kept = label.rsplit(" ", 1)[0] if " " in label else label
    return kept.rstrip(" ,;:.") + ELLIPSIS


def answered_line(name: str, reply: dict[str, object], seen: list[tuple[str, str]]) -> str:
    """What the view says once an answer went in: the option as the engine names it
    (`2. No`), or as the human saw it when that says more (`seen`: the options shown when
    the key was pressed, a cut one ending with `…`), and what the agent asks next."""
    option = str(reply.get("option", ""))
    key, dot, label = option.partition(". ")
    for seen_key, seen_label in seen:
        core = seen_label.removesuffix(ELLIPSIS)
        same = seen_key == key and (core.startswith(label) or label.startswith(core))
        if dot and same and (core != seen_label or len(core) > len(label)):
            option = f"{key}. {seen_label}"
    asks = f"; it asks again: {reply['asks']}" if reply.get("asks") else ""
    return f"{name}: answered {option}{asks}"
