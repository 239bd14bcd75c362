"""The task editor: give the selected agent a task (spec, verify command)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, TextArea


class TaskScreen(ModalScreen[tuple[str, str] | None]):
    """Returns (spec, verify) or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"),
                Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(f"New task for {self.agent}: what done means", id="prompt-target")
            yield TextArea(id="task-spec", soft_wrap=True)
            yield Input(id="task-verify", placeholder="verify command (optional), e.g. pytest -q")
            yield Label("ctrl+s save · tab next field · esc cancel", id="prompt-help")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        spec = self.query_one(TextArea).text.strip()
        if not spec:
            self.notify("A task needs a spec", severity="warning")
            return
        self.dismiss((spec, self.query_one(Input).value.strip()))

    def on_input_submitted(self) -> None:
        self.action_save()

    def action_cancel(self) -> None:
        self.dismiss(None)
