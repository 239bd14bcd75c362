"""One line of parts in a fixed width: the most important parts keep their room, the rest
take a shorter form or go, and nothing is ever cut mid-word."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

ELLIPSIS = "…"


def clip(text: str, width: int) -> str:
    """`text` in `width` cells: whole, or cut at a word's end with `…` (mid-word only when
    its first word alone is wider)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    room, cut = width - 1, ""
    for i in range(len(text), 0, -1):
        if cell_len(text[:i]) <= room:
            cut = text[:i]
            break
    if not text[len(cut) :].startswith(" ") and " " in cut:  # mid-word: back to its start
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:·") + ELLIPSIS


@dataclass(frozen=True)
class Part:
    """One part of a line: its forms, longest first (`""` last when it may go), its style,
    and when each form is given up for the next: `rank`, one for every step or one per step
    (the highest goes first; 0 is kept longest)."""

    forms: tuple[str, ...]
    rank: int | tuple[int, ...]
    style: str = ""

    def step_ranks(self) -> tuple[int, ...]:
        steps = len(self.forms) - 1
        return (self.rank,) * steps if isinstance(self.rank, int) else self.rank[:steps]


def fit(parts: Sequence[Part], width: int, sep: str = " · ", lead: str = "") -> Text:
    """The parts in their order, joined by `sep`, in `width` cells (0: any width). Room is
    made a step at a time, the highest rank first (on a tie, the part further right): a
    part takes its next, shorter form, or goes; what still does not fit is clipped at a
    word's end."""
    level = [0] * len(parts)

    def line() -> Text:
        out = Text(lead, no_wrap=True)
        shown = [(p, p.forms[i]) for p, i in zip(parts, level, strict=True) if p.forms[i]]
        for n, (part, form) in enumerate(shown):
            if n:
                out.append(sep)
            out.append(form, style=part.style)
        return out

    text = line()
    steps = sorted(
        ((rank, i, n) for i, part in enumerate(parts) for n, rank in enumerate(part.step_ranks())),
        key=lambda step: (-step[0], -step[1], step[2]),
    )
    for _, i, _ in steps:
        if not width or text.cell_len <= width:
            break
        level[i] += 1
        text = line()
    if width and text.cell_len > width:
        clipped = clip(text.plain, width)
        text = text[: len(clipped) - 1]
        text.append(ELLIPSIS)
    return text
