"""The help screen (?): every key of the fleet view and of each panel, read from their
bindings."""

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

from swarm_tui.ui.keys import bindings_of, hint, key_text
from swarm_tui.ui.messages import MessagesScreen
from swarm_tui.ui.prompt import FocusScreen, PromptScreen
from swarm_tui.ui.reminders import RemindersScreen
from swarm_tui.ui.task_editor import TaskScreen

Section = tuple[str, Iterable[BindingType]]


class HelpScreen(ModalScreen[None]):
    """Sections of (title, bindings): key, what it does, and more about it."""

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
        parts: list[RenderableType] = []
        for n, (title, bindings) in enumerate(sections):
            parts.append(Text(("\n" if n else "") + title, style="bold underline"))
            table = Table(box=None, show_header=False, padding=(0, 1, 0, 0), expand=True)
            table.add_column(justify="right", style="bold cyan", no_wrap=True,
                             width=keys_w)
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
        ("the fleet view", fleet_keys),
        (opened_by("the prompt", "prompt", "prompt_all", "prompt_role"), PromptScreen.BINDINGS),
        (opened_by("the one-line editor", "focus_label", "save"), FocusScreen.BINDINGS),
        (opened_by("the task editor", "task"), TaskScreen.BINDINGS),
        (opened_by("the reminders panel", "reminders"), RemindersScreen.BINDINGS),
        (opened_by("the messages log", "messages"), MessagesScreen.BINDINGS),
    ]
