"""The diff view's head and foot as text fitted to a width: the title (agent, branch, size,
worktree; conflicts; what was left out), the key hint packed in a few lines, and what the
view says, wrapped. Pure: Rich text, no widgets."""

from __future__ import annotations

from rich.text import Text

from swarm_tui.protocol.models import DiffView
from swarm_tui.ui.diffparse import neutralise
from swarm_tui.ui.fit import clip


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def packed(items: list[str], width: int, lines: int, sep: str = " · ") -> str:
    """`items` joined by `sep` in at most `lines` lines of `width` cells, an item never
    split across two; what does not fit is cut with an ellipsis."""
    out: list[str] = []
    for item in items:
        if out and len(out[-1]) + len(sep) + len(item) <= width:
            out[-1] += sep + item
        else:
            out.append(item)
    if width <= 0:
        return sep.join(items)
    if len(out) > lines:
        out = [*out[: lines - 1], clip(sep.join(out[lines - 1 :]), width)]
    return "\n".join(clip(line, width) for line in out)


def wrapped(text: str, width: int, lines: int) -> str:
    """`text` wrapped at words to `width` cells, in at most `lines` lines (the last ends
    in … when there was more)."""
    if width <= 0:
        return text
    words, out = text.split(), [""]
    for word in words:
        line = f"{out[-1]} {word}" if out[-1] else word
        if len(line) <= width or not out[-1]:
            out[-1] = line
        else:
            out.append(word)
    if len(out) > lines:
        out = [*out[: lines - 1], clip(" ".join(out[lines - 1 :]), width)]
    return "\n".join(line if len(line) <= width else clip(line, width) for line in out)


def title_text(v: DiffView, width: int) -> Text:
    """The view's head: the agent, its branch and base, the change's size, its worktree
    (what does not fit goes, the worktree first; the counts stay); a line for conflicts,
    one for what was left out. Each line ends in … when cut."""
    size = Text.assemble(
        (f"+{v.added}", "bold #3fb950"),
        " ",
        (f"−{v.deleted}", "bold #f85149"),
        f", {plural(v.changed, 'file')}",
    )  # all the change
    branch = f"{neutralise(v.branch)} → {neutralise(v.base)}"
    where = f"{v.host}:" if v.host != "local" else ""
    worktree = (f"{where}{neutralise(v.worktree)}", "dim")
    forms = [
        Text.assemble((v.agent, "bold"), "  ", branch, "  ", size, "   ", worktree),
        Text.assemble((v.agent, "bold"), "  ", branch, "  ", size),
        Text.assemble((v.agent, "bold"), "  ", size, "  ", branch),
    ]
    title = next((f for f in forms if not width or f.cell_len <= width), forms[-1])
    title.no_wrap, title.overflow = True, "ellipsis"
    if v.conflicts:
        names = ", ".join(neutralise(c) for c in v.conflicts)
        many = f" in {plural(len(v.conflicts), 'file')}" if len(v.conflicts) > 1 else ""
        title.append(f"\n⚠ conflicts with {neutralise(v.base)}{many}: {names}", style="bold red")
    if v.trimmed:
        title.append(f"\ntrimmed: {neutralise(v.trimmed)}", style="yellow")
    return title
