"""GitHub Copilot CLI (npm `@github/copilot`): launch, read its screen, run it headless.

Screens measured on @github/copilot 1.0.102 in a 120x40 tmux window, offline against a fake
OpenAI-compatible server (`COPILOT_OFFLINE=true` + `COPILOT_PROVIDER_BASE_URL`; captures in
tests/fixtures/screens/copilot-*.txt). Its chrome, bottom up:

    ────────────────────────────────    <- the input box: `❯` and the draft between two rules
    ❯ text of the draft                    (a long paste shows as `[Paste #1 - 12 lines]`)
    ────────────────────────────────
     ◎ Working · 18 B esc esc interrupt  <- status line: a spinner and `Working` while busy;
                                            otherwise hints (`/ commands · ? help`, …)

A question (folder trust at first start in a new folder, a tool's permission) replaces the
box with a framed dialog: `│ Do you want to run this command? │`, numbered options and
`↑/↓ to navigate · enter to select · esc to cancel`.

ctrl+c clears a draft when idle, but cancels the turn when busy and exits when pressed twice
on an empty box: the injector sends it only to clear a non-empty draft of an idle agent.

A message that starts with `!` would run as a shell command (`$ Shell …`), and Copilot trims
whitespace before it looks, so a space cannot escape it: it is typed after a zero-width space
(U+200B, which JavaScript's trim keeps), and the model gets the text with that invisible mark
in front.
"""

from __future__ import annotations

import re

from swarm_tui.agents.answers import NUMBERED, numbered, shortcut
from swarm_tui.agents.base import Adapter, AgentState, Option, Reading, command_line
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

RULE = re.compile(r"^─{8,}$")
BUSY = re.compile(r"^\s*\S?\s*Working\b")
DIALOG_HINT = re.compile(r"enter to select")
QUESTION = re.compile(r"^│\s*Do you (?:want to )?(.+?)\?")
ZERO_WIDTH_SPACE = "\u200b"  # not whitespace to JavaScript's trim


class CopilotAdapter(Adapter):
    name = "copilot"
    executable = "copilot"
    family = ""  # Copilot routes to several model families; the model name tells which
    submit_delay = 0.2
    idle_quiet = 1.5
    reads_input_box = True
    clear_draft_keys = ("C-c",)
    fresh_command = "/clear"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return command_line([*self.program(agent), *model, *agent.args])

    def typed_text(self, text: str) -> str:
        """`text`, unless it starts with `!` (a shell command): see the module doc."""
        return ZERO_WIDTH_SPACE + text if text.startswith("!") else text

    def headless(self, model: str) -> list[str]:
        # piped stdin is the prompt; -s prints the answer alone; prompt mode needs the tools
        # pre-approved, and the judge's prompt asks it to read, not to change anything
        return [
            self.executable,
            "-s",
            "--allow-all-tools",
            "--no-auto-update",
            *(["--model", model] if model else []),
        ]

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """The key an option names (`No … (Esc to stop)` is Escape: it refuses and stops
        the turn), else its number, which picks it at once. Not the arrows and Enter: a key
        that missed its dialog and landed in the input box can be taken back, an Enter
        would submit the box. (`No, and tell Copilot …` is a text field: its number only
        moves there, and a digit typed then would be the words to tell Copilot.)"""
        number, label = reading.options[index]
        return [shortcut(label) or number]

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        dialog = _dialog(shown)
        if dialog is not None:
            options, cursor = _options(shown)
            return Reading(AgentState.NEEDS_PERMISSION, None, dialog, None, options, cursor)
        rules = [i for i, ln in enumerate(shown) if RULE.match(ln)]
        if len(rules) < 2 or rules[-1] - rules[-2] < 2:
            return Reading(None)
        top, bottom = rules[-2], rules[-1]
        body = shown[top + 1 : bottom]
        if not body[0].startswith("❯"):
            return Reading(None)
        draft = "\n".join([body[0][1:].strip(), *(ln.strip() for ln in body[1:])]).strip()
        status = next((ln for ln in shown[bottom + 1 :] if ln.strip()), "")
        if BUSY.search(status):
            return Reading(AgentState.WORKING, draft)
        return Reading(AgentState.IDLE, draft)


def _dialog(shown: list[str]) -> str | None:
    """The question of a framed dialog at the bottom of the screen, if one is open."""
    if not shown[-1].startswith("╰"):
        return None
    tops = [i for i, ln in enumerate(shown) if ln.startswith("╭")]
    if not tops:
        return None
    frame = shown[tops[-1] :]
    if not any(DIALOG_HINT.search(ln) for ln in frame):
        return None
    for ln in frame:
        if m := QUESTION.search(ln):
            return m.group(1)
    title = frame[1].strip("│ ") if len(frame) > 1 else ""
    return title or "answer a question"


def _options(shown: list[str]) -> tuple[tuple[Option, ...], int | None]:
    """The framed dialog's numbered options, the frame (`│`) taken off."""
    top = max(i for i, ln in enumerate(shown) if ln.startswith("╭"))
    inside = [ln.strip().strip("│").rstrip() for ln in shown[top + 1 :] if ln.startswith("│")]
    first = next((i for i, ln in enumerate(inside) if NUMBERED.match(ln)), None)
    return numbered(inside[first:]) if first is not None else ((), None)
