"""The help screen (?): a legend of the agents' states (each one's glyph and colour, from
the tables the tiles, the sidebar and the status line draw with), then every key of the fleet
view and of each panel, read from their bindings."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from swarm_tui.ui.diff import DiffScreen
from swarm_tui.ui.difflog import DiffLog
from swarm_tui.ui.history import HistoryLog, HistoryScreen
from swarm_tui.ui.keys import bindings_of, for_help, hint, key_text
from swarm_tui.ui.messages import MessagesScreen
from swarm_tui.ui.prompt import FocusScreen, PromptScreen
from swarm_tui.ui.reminders import RemindersScreen
from swarm_tui.ui.task_editor import TaskScreen
from swarm_tui.ui.tiles import STATE_COLORS, STATE_MARKS, state_styles

Section = tuple[str, Iterable[BindingType]]
# the history's sideways scroll: its scroll view's own keys (Textual's), said here
SIDEWAYS = Binding(
    "left,right",
    "scroll_left",
    "Scroll sideways",
    tooltip="lines wider than the screen (ctrl+pgup / ctrl+pgdn: a screen at a time)",
)

STATE_MEANINGS = {
    "starting": "its CLI is starting up",
    "working": "busy on a turn",
    "idle": "done with its turn, waiting for input",
    "needs-permission": "waiting on a prompt: it needs you (the status line: need you)",
    "exited": "its CLI ended",
    "unreachable": "its node cannot be reached",
}


def legend(styles: dict[str, str]) -> Table:
    """Each state's glyph and name in its colour, as tiles, sidebar and status line draw
    them (`styles`: `state_styles` in the app's theme)."""
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 0))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(style="grey62")
    for state in STATE_COLORS:
        style = styles.get(state, "")
        table.add_row(
            Text(STATE_MARKS[state], style=style),
            Text(state, style=style),
            STATE_MEANINGS.get(state, ""),
        )
    table.add_row(
        "",
        "",
        "a tile's border has its state's colour: heavy (┏━┓) when it needs "
        "you, double (╔═╗) when selected, dashed when its node's link is down; ✓ "
        "marks a marked agent",
    )
    table.add_row(
        "",
        "",
        "in the sidebar: the time beside the state is how long it has been so (working: "
        "how long its screen has been quiet); ✉3 5m: three messages queued, the oldest "
        "for 5m; ▸ its task and round (■ a task that stopped); ⏰ its next reminder in",
    )
    return table


class HelpScreen(ModalScreen[None]):
    """Sections of (title, bindings): key, what it does, and more about it (a title's
    second line is a note under it)."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss_screen", "Close")]

    def __init__(self, sections: list[Section]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            with VerticalScroll(id="help-scroll"):
                yield Static(self.body(), id="help-table")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def body(self) -> Group:
        """A title and a table per section; the key and description columns line up
        across sections, the longer help wraps."""
        sections = [(title, bindings_of(items)) for title, items in self.sections]
        every = [b for _, bs in sections for b in bs]
        keys_w = max(len(key_text(b.key)) for b in every)
        what_w = max(len(b.description) for b in every)
        parts: list[RenderableType] = [
            Text("the agents' states", style="bold underline"),
            legend(state_styles(self.app.get_css_variables())),
        ]
        for title, bindings in sections:
            head, _, note = title.partition("\n")  # a note under the title, if any
            parts.append(Text("\n" + head, style="bold underline"))
            if note:
                parts.append(Text(note, style="grey62"))
            table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), expand=True)
            table.add_column(justify="right", style="bold cyan", no_wrap=True, width=keys_w)
            table.add_column(style="bold", no_wrap=True, width=what_w)
            table.add_column(style="grey62", ratio=1)
            for b in bindings:
                table.add_row(key_text(b.key), b.description, b.tooltip)
            parts.append(table)
        return Group(*parts)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)


def fleet_help(fleet_keys: list[BindingType]) -> list[Section]:
    """Every key: the fleet view's, then each screen's with the keys that open it."""

    def opened_by(title: str, *ids: str) -> str:
        keys = [key_text(b.key) for b in bindings_of(fleet_keys) if b.id in ids]
        return f"{title} ({', '.join(keys)})"

    return [
        ("the fleet view", for_help(fleet_keys)),
        (opened_by("the prompt", "prompt", "prompt_all", "prompt_role"), PromptScreen.BINDINGS),
        (opened_by("the one-line editor", "focus_label", "save"), FocusScreen.BINDINGS),
        (opened_by("the task editor", "task"), TaskScreen.BINDINGS),
        (opened_by("the reminders panel", "reminders"), RemindersScreen.BINDINGS),
        (
            opened_by("the messages log", "messages"),
            [*MessagesScreen.BINDINGS, MessagesScreen.OPEN],
        ),
        (
            opened_by("zoomed: the agent's history", "page_up") + ", or the wheel; drag the "
            "mouse to select",
            [*HistoryLog.BINDINGS, SIDEWAYS, *HistoryScreen.BINDINGS],
        ),
        (
            opened_by("an agent's change in its worktree", "diff") + "; a click puts the cursor "
            "on a line\nin the sidebar, its size: +120 −14 5f (lines added, deleted; files), "
            "then ⚠ when its branch conflicts with its base",
            [*DiffLog.BINDINGS, SIDEWAYS, *DiffScreen.BINDINGS],
        ),
    ]
