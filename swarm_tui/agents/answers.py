"""Answering a CLI's dialog from swarm: which option "yes", "no" or a number means, and the
parts of dialogs that several CLIs share (numbered option lists, arrow-key selection).

Each adapter reads its dialog's options off the screen (`Reading.options`, numbered 1, 2 …
in screen order) and says which keys pick one (`Adapter.option_keys`); what a human typed is
turned into an option here, the same way for every CLI. Anything that cannot be mapped is a
`CannotAnswer` with one line saying why: nothing is typed then.
"""

from __future__ import annotations

import re

from swarm_tui.agents.base import AgentState, Option, Reading
from swarm_tui.errors import SwarmError

CHOICE = re.compile(r"^(?:yes|no|[1-9])$")
# the first option that starts with one of these words is "yes" / "no"; `y` never picks one
# that grants more than this once ("Yes, and don't ask again …", "Allow always"), wherever
# the dialog lists it: that takes its number
YES = re.compile(r"^(?:yes|allow|approve|proceed|accept|trust|run|confirm)\b", re.I)
NO = re.compile(r"^(?:no|reject|deny|decline|skip|cancel)\b", re.I)
ALWAYS = re.compile(r"\balways\b|\bdon'?t ask again\b|\bdo not ask again\b", re.I)
# `› 1. Yes, proceed (y)` / `❯ 2. No` / `● 1. Allow once`: a mark, a number, the label
NUMBERED = re.compile(r"^\s*(?:[❯›●>]\s*)?(\d{1,2})\.\s+(\S.*?)\s*$")
MARKED = re.compile(r"^\s*[❯›●]")
# the key a CLI names at the end of an option: `(y)`, `(p)`, `(esc)`, `(Esc to stop)`
SHORTCUT = re.compile(r"\((esc|[a-z])(?: to \w+)?\)$", re.I)


class CannotAnswer(SwarmError):
    """The dialog cannot be answered that way from swarm (attach to answer it)."""


def pick(cli: str, reading: Reading, choice: str) -> int:
    """The index of the option that `choice` ("yes", "no", "1".."9") means in the dialog
    `reading` shows; CannotAnswer says why when none does."""
    choice = choice.strip().lower()
    if not CHOICE.match(choice):
        raise CannotAnswer(
            f"{cli}: {choice!r} is not an answer (yes, no or an option's number 1-9)"
        )
    if reading.state is not AgentState.NEEDS_PERMISSION:
        raise CannotAnswer(f"{cli}: no dialog on its screen now")
    options = reading.options
    if not options:
        raise CannotAnswer(
            f"{cli}: its dialog's options cannot be read from the screen; attach to answer it"
        )
    if choice.isdigit():
        index = int(choice) - 1
        if index >= len(options):
            listed = "1" if len(options) == 1 else f"1-{len(options)}"
            raise CannotAnswer(
                f"{cli}: no option {choice} in this dialog (it has {listed}); attach to answer it"
            )
        return index
    wanted = YES if choice == "yes" else NO
    for index, (_, label) in enumerate(options):
        if wanted.match(label) and not (choice == "yes" and ALWAYS.search(label)):
            return index
    listed = " / ".join(f"{k}. {label}" for k, label in options)
    if choice == "yes" and any(YES.match(label) for _, label in options):
        raise CannotAnswer(
            f"{cli}: its only yes grants more than this once ({listed}); y never picks "
            "that: press its number, or attach to answer it"
        )
    raise CannotAnswer(
        f"{cli}: this dialog has no plain {choice} ({listed}); press an "
        "option's number, or attach to answer it"
    )


def numbered(lines: list[str]) -> tuple[tuple[Option, ...], int | None]:
    """The options of a numbered list (`❯ 1. Yes`, `  2. No …`): each number starts an
    option, a line without one that follows is its label going on (a long label wraps);
    and the index of the option the selection mark (❯ › ●) is on, if any."""
    labels: list[str] = []
    cursor = None
    for line in lines:
        m = NUMBERED.match(line)
        if m and int(m.group(1)) == len(labels) + 1:
            if MARKED.match(line):
                cursor = len(labels)
            labels.append(m.group(2))
        elif labels and line.strip():
            labels[-1] += " " + line.strip()
        elif labels:
            break  # a blank line ends the list
    return tuple((str(i + 1), label) for i, label in enumerate(labels)), cursor


def shortcut(label: str) -> str | None:
    """The key an option names at the end of its label, as a tmux key name: `(y)` is "y",
    `(esc)` is "Escape"; None when it names none."""
    m = SHORTCUT.search(label)
    if m is None:
        return None
    key = m.group(1)
    return "Escape" if key.lower() == "esc" else key


def arrows(cursor: int | None, index: int, down: str = "Down", up: str = "Up") -> list[str]:
    """Keys that move a selection mark from `cursor` to option `index`, then Enter."""
    if cursor is None:
        raise CannotAnswer("the dialog's selection mark is not on the screen")
    step = down if index > cursor else up
    return [step] * abs(index - cursor) + ["Enter"]
