"""The fleet view's keys: one table of bindings, each with an id (for user keymaps), a short
description (footer, palette title) and a longer tooltip (help, palette). The footer, the
help screen (?), the command palette and every screen's hint line are built from bindings;
no key is written anywhere else."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.keys import format_key

NAMES = {"enter": "enter", "question_mark": "?", "escape": "esc"}

FLEET_KEYS: list[BindingType] = [
    Binding(
        "left,h",
        "move(-1, 0)",
        "Left",
        show=False,
        id="left",
        tooltip="select the tile to the left",
    ),
    Binding(
        "right,l",
        "move(1, 0)",
        "Right",
        show=False,
        id="right",
        tooltip="select the tile to the right",
    ),
    Binding("up,k", "move(0, -1)", "Up", show=False, id="up", tooltip="select the tile above"),
    Binding("down,j", "move(0, 1)", "Down", show=False, id="down", tooltip="select the tile below"),
    Binding("question_mark", "help", "Help", id="help", tooltip="every key, on every screen"),
    Binding(
        "pagedown,right_square_bracket",
        "page(1)",
        "Next page",
        id="next_page",
        tooltip="the next page of tiles (zoomed: the next agent)",
    ),
    Binding(
        "pageup",
        "page_up",
        "Prev page",
        id="page_up",
        tooltip="the previous page of tiles; zoomed: the agent's history (the wheel "
        "too): scroll, / search, n/N, y copy",
    ),
    Binding(
        "left_square_bracket",
        "page(-1)",
        "Prev page or agent",
        show=False,
        id="prev_page",
        tooltip="the previous page of tiles (zoomed: the previous agent)",
    ),
    Binding("enter,z", "zoom", "Zoom", id="zoom", tooltip="the selected agent full size, and back"),
    Binding(
        "space",
        "mark",
        "Mark",
        id="mark",
        tooltip="add the selected agent to the marked ones, or take it out",
    ),
    Binding(
        "i",
        "prompt('selection')",
        "Prompt",
        id="prompt",
        tooltip="type a message into the marked agents (or the selected one)",
    ),
    Binding(
        "a",
        "prompt('all')",
        "Prompt all",
        id="prompt_all",
        tooltip="type a message into every agent",
    ),
    Binding(
        "r",
        "prompt('role')",
        "Prompt role",
        show=False,
        id="prompt_role",
        tooltip="type a message into every agent of the selected agent's role",
    ),
    Binding(
        "f",
        "focus_label",
        "Focus label",
        id="focus_label",
        tooltip="edit the selected agent's one focus label",
    ),
    Binding(
        "t",
        "attach",
        "Attach",
        id="attach",
        tooltip="full control of the agent's tmux window (C-b d comes back)",
    ),
    Binding(
        "y",
        "answer('yes')",
        "Answer yes",
        show=False,
        id="answer_yes",
        tooltip="answer the selected agent's permission dialog (shown in its tile): "
        "its first yes, e.g. allow once; t attaches for more",
    ),
    Binding(
        "n",
        "answer('no')",
        "Answer no",
        show=False,
        id="answer_no",
        tooltip="answer the selected agent's permission dialog: its no",
    ),
    *(
        Binding(
            str(n),
            f"answer('{n}')",
            f"Answer {n}",
            show=False,
            id=f"answer_{n}",
            tooltip=f"answer the selected agent's permission dialog: option {n}",
        )
        for n in range(1, 10)
    ),
    Binding(
        "m",
        "messages",
        "Messages",
        id="messages",
        tooltip="who said what to whom, with delivery status",
    ),
    Binding(
        "T",
        "task",
        "New task",
        show=False,
        id="task",
        tooltip="give the selected agent a task: what done means, a verify command",
    ),
    Binding(
        "v",
        "review",
        "Judge now",
        show=False,
        id="review",
        tooltip="review the selected agent's task now",
    ),
    Binding(
        "d",
        "diff",
        "Changes",
        id="diff",
        tooltip="its change in its worktree: files, hunks, comments as one review, merge",
    ),
    Binding(
        "J",
        "judge_pane",
        "Judge pane",
        show=False,
        id="judge_pane",
        tooltip="show or hide the judge pane",
    ),
    Binding(
        "R",
        "reminders",
        "Reminders",
        show=False,
        id="reminders",
        tooltip="list, pause, snooze, fire, edit or delete reminders",
    ),
    Binding(
        "F",
        "fresh",
        "Fresh start",
        show=False,
        id="fresh",
        tooltip="handoff note, new conversation, focus and note typed in again",
    ),
    Binding(
        "S",
        "save",
        "Save layout",
        show=False,
        id="save",
        tooltip="write the running fleet as a layout file",
    ),
    Binding(
        "slash",
        "filter",
        "Filter",
        id="filter",
        tooltip="show only agents whose name, role, state, host or focus has every "
        "word you type; empty shows all",
    ),
    Binding(
        "g",
        "go",
        "Go to",
        show=False,
        id="go",
        tooltip="select an agent by (the start of) its name",
    ),
    Binding(
        "b",
        "sidebar",
        "Sidebar",
        show=False,
        id="sidebar",
        tooltip="hide or show the sidebar (a narrow terminal gets more tiles)",
    ),
    Binding(
        "U",
        "start_engine",
        "Start engine",
        show=False,
        id="start_engine",
        tooltip="when the engine is unreachable: start it again (it resumes its journal)",
    ),
    Binding(
        "q",
        "quit_ui",
        "Quit",
        id="quit",
        tooltip="leave the view; the engine and the agents keep running",
    ),
]

NOT_IN_PALETTE = frozenset({"left", "right", "up", "down"})
# the footer's keys, the most used first: a narrow footer shows the first that fit
FOOTER_ORDER = (
    "help",
    "quit",
    "zoom",
    "prompt",
    "next_page",
    "mark",
    "filter",
    "messages",
    "attach",
    "prompt_all",
    "page_up",
    "focus_label",
    "diff",
)

# rows the help shows for several bindings at once
OPTION_KEYS = Binding(
    "1-9",
    "answer('1')",
    "Answer 1-9",
    id="answer_n",
    tooltip="answer the selected agent's permission dialog: that option",
)
PREV_KEYS = Binding(
    "pageup,left_square_bracket",
    "page(-1)",
    "Prev page",
    id="prev",
    tooltip="the previous page of tiles; zoomed, [ is the previous agent and "
    "pgup the agent's history (the wheel too): scroll, / search, n/N, "
    "y copy",
)
PALETTE_KEY = Binding(
    "ctrl+p",
    "command_palette",
    "Palette",
    id="palette",
    tooltip="every action by its name, Go to an agent, Skill: a skill",
)
MERGED = {"answer_1": OPTION_KEYS, "page_up": PREV_KEYS}  # the row, where its first was
MERGED_INTO = {**{f"answer_{n}": "answer_1" for n in range(2, 10)}, "prev_page": "page_up"}


def for_help(items: Iterable[BindingType]) -> list[Binding]:
    """Bindings as the help lists them: the nine option numbers as one row, pgup and [ as
    one, and the palette's key last."""
    out: list[Binding] = []
    for b in bindings_of(items):
        if b.id in MERGED_INTO:
            continue
        out.append(MERGED.get(b.id or "", b))
    return [*out, PALETTE_KEY]


def key_text(keys: str) -> str:
    """A binding's keys as people read them: `pagedown,right_square_bracket` is `pgdn / ]`."""
    return " / ".join(NAMES.get(k.strip(), format_key(k.strip())) for k in keys.split(","))


def bindings_of(items: Iterable[BindingType]) -> list[Binding]:
    """The Binding objects of a BINDINGS list (which may also hold tuples)."""
    return [b if isinstance(b, Binding) else Binding(*b) for b in items]


def hint(items: Iterable[BindingType]) -> str:
    """A screen's one-line key hint, e.g. `enter send · esc cancel`."""
    return " · ".join(
        f"{key_text(b.key)} {b.description[:1].lower()}{b.description[1:]}"
        for b in bindings_of(items)
        if b.description
    )


def palette_commands(app: App[Any], items: Iterable[BindingType]) -> Iterator[SystemCommand]:
    """One palette command per binding: its description, its tooltip and keys, its action."""
    for b in bindings_of(items):
        if b.id in NOT_IN_PALETTE:
            continue
        yield SystemCommand(
            b.description, f"{b.tooltip} ({key_text(b.key)})", partial(app.run_action, b.action)
        )


def footer_ranks(items: Iterable[BindingType]) -> dict[str, int]:
    """Each footer key's action and its place in FOOTER_ORDER (0 is kept longest)."""
    rank = {key_id: i for i, key_id in enumerate(FOOTER_ORDER)}
    return {b.action: rank[b.id] for b in bindings_of(items) if b.id in rank}


FOOTER_KEYS = footer_ranks(FLEET_KEYS)
