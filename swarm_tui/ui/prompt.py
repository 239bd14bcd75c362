"""Modal screens: the injection prompt and the focus-label editor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static, TextArea

from swarm_tui.protocol.models import SkillView
from swarm_tui.ui.fields import after_typed
from swarm_tui.ui.keys import bindings_of, hint


@dataclass(frozen=True)
class Target:
    """Who a prompt goes to: named agents, every agent, or every agent with a role."""

    label: str
    names: tuple[str, ...]
    role: str = ""  # set when the target is every agent of this role


class PromptScreen(ModalScreen[tuple[Target, str] | None]):
    """Type a message; Enter injects it into the chosen agents; ctrl+j adds a line.
    `/name key=value` inserts a skill: tab completes its name, a preview shows below."""

    BINDINGS = [
        Binding("enter", "send", "Send", priority=True, tooltip="queue it for the target"),
        Binding("ctrl+j", "newline", "New line", priority=True),
        Binding(
            "tab",
            "next_target",
            "Next target",
            priority=True,
            tooltip="selection, all agents, each role; after /word: complete a skill",
        ),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        targets: list[Target],
        start: int = 0,
        text: str = "",
        skills: Mapping[str, SkillView] | None = None,
    ) -> None:
        super().__init__()
        self.targets = targets
        self.index = start
        self.initial = text
        self.skills = dict(skills or {})  # the engine's: it renders them

    def skills_changed(self, skills: Mapping[str, SkillView]) -> None:
        """The engine's current skills arrived (asked for when the prompt opened)."""
        self.skills = dict(skills)
        if self.is_mounted:
            self._show_skill()

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label("", id="prompt-target")
            yield TextArea(id="prompt-text", soft_wrap=True, show_line_numbers=False)
            yield Static(id="prompt-skill")
            yield Label(hint(self.BINDINGS), id="prompt-help")

    def on_mount(self) -> None:
        self._show_target()
        area = self.query_one(TextArea)
        if self.initial:
            area.text = self.initial
            area.move_cursor(area.document.end)
        area.focus()
        self._show_skill()

    def on_text_area_changed(self) -> None:
        self._show_skill()

    def _skill_word(self) -> str | None:
        text = self.query_one(TextArea).text
        if not text.startswith("/"):
            return None
        return text[1:].split(None, 1)[0] if text[1:].strip() else ""

    def _show_skill(self) -> None:
        box = self.query_one("#prompt-skill", Static)
        word = self._skill_word()
        if word is None:
            box.display = False
            return
        skills = self.skills
        box.display = True
        if word in skills:
            skill = skills[word]
            params = ", ".join(k if v is None else f"{k}={v}" for k, v in skill.params.items())
            preview = Text(
                f"/{skill.name}: {skill.description}"
                + (f"  (params: {params})" if params else "")
                + "\n",
                style="bold",
            )
            preview.append(skill.preview, style="grey62")
            box.update(preview)
            return
        matches = [s for name, s in sorted(skills.items()) if name.startswith(word)]
        text = Text()
        for s in matches[:8]:
            text.append(f"/{s.name}", style="bold cyan")
            text.append(f"  {s.description}\n", style="grey62")
        box.update(
            text
            if matches
            else Text(
                f"no skill /{word} (a message starting with / is sent as written)", style="yellow"
            )
        )

    def _show_target(self) -> None:
        self.query_one("#prompt-target", Label).update(f"To: {self.targets[self.index].label}")

    def action_next_target(self) -> None:
        after_typed([self.query_one(TextArea)], self._next_target)

    def _next_target(self) -> None:
        word = self._skill_word()
        if word is not None:
            skills = self.skills
            matches = sorted(n for n in skills if n.startswith(word))
            if matches and word not in skills:
                area = self.query_one(TextArea)
                rest = area.text[1 + len(word) :]
                area.text = f"/{matches[0]} " + rest.lstrip(" ")
                area.move_cursor(area.document.end)
                return
        self.index = (self.index + 1) % len(self.targets)
        self._show_target()

    def action_newline(self) -> None:
        self.query_one(TextArea).insert("\n")

    def action_send(self) -> None:
        after_typed([self.query_one(TextArea)], self._send)

    def _send(self) -> None:
        if not self.is_current:
            return  # sent already
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("Empty message: type something, or esc to cancel", severity="warning")
            return
        self.dismiss((self.targets[self.index], text))

    def action_cancel(self) -> None:
        self.dismiss(None)


class FocusScreen(ModalScreen[str | None]):
    """Edit one line: an agent's focus label (or any other short answer: a name to go to, a
    filter, a search); `verb` says what enter does with it."""

    BINDINGS = [
        Binding(
            "enter",
            "save",
            "Save",
            priority=True,
            tooltip="save it (or go, filter, search: the line below says)",
        ),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(
        self,
        agent: str,
        current: str,
        title: str = "",
        placeholder: str = "one focus label",
        verb: str = "save",
    ) -> None:
        super().__init__()
        self.agent = agent
        self.current = current
        self.title_text = title or f"Focus of {agent}"
        self.placeholder = placeholder
        self.verb = verb

    def compose(self) -> ComposeResult:
        keys = [
            replace(b, description=self.verb) if b.action == "save" else b
            for b in bindings_of(self.BINDINGS)
        ]
        with Vertical(id="focus-box"):
            yield Label(self.title_text)
            yield Input(value=self.current, id="focus-input", placeholder=self.placeholder)
            yield Label(hint(keys), id="prompt-help")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def action_save(self) -> None:
        after_typed([self.query_one(Input)], self._save)

    def _save(self) -> None:
        if self.is_current:
            self.dismiss(self.query_one(Input).value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def skill_request(text: str, skills: Mapping[str, object]) -> tuple[str, dict[str, str], str]:
    """What a prompt asks to send: `/skill k=v` on the first line is (skill, params, the
    lines after it), for the engine to render for each recipient; any other text is sent as
    written. Raises ValueError for a parameter not written name=value."""
    first, _, more = text.partition("\n")
    words = first[1:].split() if first.startswith("/") else []
    if not words or words[0] not in skills:
        return "", {}, text
    params = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ValueError(f"skill parameter {word!r}: write name=value")
        params[key] = value
    return words[0], params, more if more.strip() else ""
