"""The task editor: give the selected agent a task (spec, verify command)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, TextArea

from swarm_tui.ui.fields import after_typed
from swarm_tui.ui.keys import hint


class TaskScreen(ModalScreen[tuple[str, str] | None]):
    """Returns (spec, verify) or None."""

    # priority bindings, run as the app reads the key (ui/fields.py): as a plain binding,
    # a fast Tab moved focus too late and the verify command landed in the spec
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("tab", "app.focus_next", "Next field", priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous field", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(f"New task for {self.agent}: what done means", id="prompt-target")
            yield TextArea(id="task-spec", soft_wrap=True)
            yield Input(id="task-verify", placeholder="verify command (optional), e.g. pytest -q")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        after_typed([self.query_one(TextArea), self.query_one(Input)], self._save)

    def _save(self) -> None:
        if not self.is_current:
            return  # saved already (ctrl+s twice)
        spec = self.query_one(TextArea).text.strip()
        if not spec:
            self.notify("A task needs a spec", severity="warning")
            return
        self.dismiss((spec, self.query_one(Input).value.strip()))

    def on_input_submitted(self) -> None:
        self.action_save()

    def action_cancel(self) -> None:
        self.dismiss(None)
