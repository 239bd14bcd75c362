"""Modal screens: the injection prompt and the focus-label editor."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, TextArea


@dataclass(frozen=True)
class Target:
    """Who a prompt goes to: named agents, every agent, or every agent with a role."""

    label: str
    names: tuple[str, ...]


class PromptScreen(ModalScreen[tuple[Target, str] | None]):
    """Type a message; Enter injects it into the chosen agents; ctrl+j adds a line."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "send", "Send", priority=True),
        Binding("ctrl+j", "newline", "New line", priority=True),
        Binding("tab", "next_target", "Next target", priority=True),
    ]

    def __init__(self, targets: list[Target], start: int = 0) -> None:
        super().__init__()
        self.targets = targets
        self.index = start

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label("", id="prompt-target")
            yield TextArea(id="prompt-text", soft_wrap=True, show_line_numbers=False)
            yield Label("enter send · ctrl+j new line · tab change target · esc cancel",
                        id="prompt-help")

    def on_mount(self) -> None:
        self._show_target()
        self.query_one(TextArea).focus()

    def _show_target(self) -> None:
        self.query_one("#prompt-target", Label).update(f"To: {self.targets[self.index].label}")

    def action_next_target(self) -> None:
        self.index = (self.index + 1) % len(self.targets)
        self._show_target()

    def action_newline(self) -> None:
        self.query_one(TextArea).insert("\n")

    def action_send(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("Empty message: type something, or esc to cancel", severity="warning")
            return
        self.dismiss((self.targets[self.index], text))

    def action_cancel(self) -> None:
        self.dismiss(None)


class FocusScreen(ModalScreen[str | None]):
    """Edit one agent's focus label."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, agent: str, current: str) -> None:
        super().__init__()
        self.agent = agent
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="focus-box"):
            yield Label(f"Focus of {self.agent}")
            yield Input(value=self.current, id="focus-input", placeholder="one focus label")
            yield Label("enter save · esc cancel", id="prompt-help")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
