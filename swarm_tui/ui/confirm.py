"""A yes/no question before something that cannot be undone (overwriting a file)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from swarm_tui.ui.keys import hint


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True for `y`, False for `n` or Escape."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(self.question, id="confirm-question")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
