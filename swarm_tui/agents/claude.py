"""Claude Code (`claude`, tested with @anthropic-ai/claude-code 2.1.332).

Its screen, bottom up: a footer under the input box (`⏸ manual mode on · ? for shortcuts`,
with `esc to interrupt` while a turn runs and the box is empty), the input box (`❯ ` plus
NBSP, between two full-width `─` rules; continuation lines indented two spaces), then a few
lines of chrome above the box: the spinner line while busy (`✽ Cogitating… (4s · ↓ 10
tokens)`; when the turn ends it becomes `✻ Worked for 6s · done 10:20 AM`), tips and the effort
badge. A permission or first-run dialog replaces the box: a `─` rule, a title, `Do you want
to …?` (or `Do you trust …` / `… one you trust?`) and numbered or `❯`-marked options, with
`Esc to cancel` at the bottom. Only this chrome is read; the transcript (answers start with
`●`, prompts with `❯`, both indented on later lines) may quote any of these words.
"""

from __future__ import annotations

import json
import re

from swarm_tui.agents.answers import NUMBERED, arrows, numbered
from swarm_tui.agents.base import (
    SESSION,
    Adapter,
    AgentState,
    Option,
    Reading,
    command_line,
    escape_own_commands,
)
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

RULE = re.compile(r"^─{20,}$")
DASHED = re.compile(r"^\s*╌{8,}$")
# the spinner line: a spinner glyph in column 0, a verb ending in an ellipsis, maybe
# `(4s · ↓ 10 tokens)`; the line that replaces it at the end of a turn has no ellipsis
SPINNER = re.compile(r"^[·✢✳✶✻✽*∗⋆+] \S[^…]*…(?: \(.*\))?\s*$")
BUSY_FOOTER = re.compile(r"esc to interrupt|ctrl\+c to interrupt", re.I)
QUESTION = re.compile(r"^\s*(Do you (?:want to|trust) .+?\?|.*\bone you trust\?)")
OPTION = re.compile(r"^\s*(?:❯\s*)?(?:\d+\.\s+)?\S")
CANCEL = re.compile(r"Esc to cancel|Enter to confirm")
# N% left: the context warning reads `N% until auto-compact`, `N% context used` (when
# auto-compact is off), `auto-compact next`; older versions said `Context left until
# auto-compact: N%`
UNTIL_COMPACT = re.compile(
    r"(\d{1,3})% until auto-compact|Context left until auto-compact: "
    r"(\d{1,3})%"
)
USED = re.compile(r"(\d{1,3})% context used")
COMPACT_NEXT = re.compile(r"\bauto-compact next\b")
PASTE_MARKER = re.compile(r"\[Pasted text #\d+(?: \+\d+ lines)?\]")
CHROME_ABOVE = 4  # non-empty lines above the box that may be chrome (spinner, tips, badge)
DIALOG_LINES = 24  # how far up from the bottom a dialog's question may be

# Claude Code's own slash commands (2.1.332, with common aliases): text starting with one of
# these is typed as the command; any other text starting with `/` would be refused as an
# "Unknown command" and never reach the model, so it is typed after a space.
COMMANDS = frozenset(
    """
access add-dir advisor agents artifacts autocompact background bashes bg branch brief btw bug
cd checkpoint clear cloud-plugins color compact config context continue copy cost desktop diff
doctor effort exit export extra-usage fast feedback focus fork goal help hooks ide import init
insights install install-github-app install-slack-app keybindings list-agents login logout mcp
memory mobile model new output-style passes permissions plan plugin pr-comments privacy-settings
project quit recap release-notes reload-plugins reload-skills remote-control remote-env rename
reset restart resume review rewind security-review session skills stats status statusline stop
tasks teleport terminal-setup theme todos ultraplan ultrareview undo upgrade usage version vim
voice workflows
""".split()
)
HOOK_COMMAND = "swarm hook claude >/dev/null 2>&1 || true"


class ClaudeAdapter(Adapter):
    name = "claude"
    executable = "claude"
    family = "anthropic"
    fresh_command = "/clear"
    reads_input_box = True
    # 2.1.332 takes a bracketed paste whole and an Enter right after it submits (measured
    # down to 0 ms); the margin covers older versions' ~100 ms paste timer
    submit_delay = 0.15
    # between a tool call and the next request the spinner can pause; a turn is over only
    # when the idle box has held this long (the Stop hook, where wired, says it at once)
    idle_quiet = 1.0
    verify_timeout = 3.0
    min_window = (44, 20)  # its queue and states are tested with the real CLI at 44x20
    # Esc Esc clears the whole input, all lines; Ctrl-C would too, but a second Ctrl-C within
    # a second exits Claude Code, and Ctrl-U only clears to the start of one line
    clear_draft_keys = ("Escape", "Escape")

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        return command_line([*self._argv(agent), *agent.args])

    def resume(self, agent: ResolvedAgent, ctx: LaunchContext, session: str) -> str:
        return command_line([*self._argv(agent), "--resume", session, *agent.args])

    def _argv(self, agent: ResolvedAgent) -> list[str]:
        args = self.program(agent)
        if agent.model:
            args += ["--model", agent.model]
        if agent.hooks:
            args += ["--settings", json.dumps(hook_settings(), separators=(",", ":"))]
        return args

    def session_id(self, payload: dict[str, object]) -> str:
        sid = payload.get("session_id")  # every hook event carries it
        return sid if isinstance(sid, str) and SESSION.fullmatch(sid) else ""

    def headless(self, model: str) -> list[str]:
        argv = [self.executable, "-p", "--output-format", "json"]
        return [*argv, "--model", model] if model else argv

    def typed_text(self, text: str) -> str:
        """What to paste for `text`: a leading `/` that is not a Claude Code command would be
        refused by the CLI, and a leading `!` would run the text as a shell command (bash
        mode), so such text goes in after a space (the model gets it as typed)."""
        return escape_own_commands(text, COMMANDS)

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        context = _context_left(shown)
        box = _box(shown)
        if box is None:
            question = _dialog(shown)
            if question is not None:
                options, cursor = _options(shown[-DIALOG_LINES:])
                return Reading(
                    AgentState.NEEDS_PERMISSION, None, question, context, options, cursor
                )
            return Reading(None, None, "", context)
        draft, top, bottom = box
        footer = shown[bottom + 1 :]
        above = [ln for ln in shown[max(0, top - 12) : top] if ln.strip()][-CHROME_ABOVE:]
        busy = any(BUSY_FOOTER.search(ln) for ln in footer) or any(
            SPINNER.match(ln) for ln in above
        )
        return Reading(AgentState.WORKING if busy else AgentState.IDLE, draft, "", context)

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """A numbered option's number picks it at once; a list without numbers (the folder
        trust and API key dialogs) is walked with the arrows from the `❯`, then Enter."""
        if reading.cursor is None:
            return [reading.options[index][0]]
        return arrows(reading.cursor, index)

    def submitted(self, before: list[str], after: list[str], text: str) -> bool | None:
        reading = self.read(after)
        if reading.state is AgentState.NEEDS_PERMISSION:
            return True  # the turn it started already asks for a tool: it left the box
        if reading.draft is None:
            # no box (the screen is between two frames, or /clear wiped it): wait for one;
            # never a rescue Enter into a screen we cannot read
            return False if after == before else None
        if reading.draft.strip():
            return False  # still in the box (its text, or a `[Pasted text #N …]` marker)
        return after != before  # an empty box, and the screen moved on: it was taken

    def hook_state(self, payload: dict[str, object]) -> AgentState | None:
        event = payload.get("hook_event_name")
        if event == "Stop":
            return AgentState.IDLE
        if event == "Notification":
            kind = str(payload.get("notification_type") or "")
            message = str(payload.get("message") or "")
            if (
                kind in ("permission_prompt", "elicitation_dialog")
                or "permission" in message.lower()
            ):
                return AgentState.NEEDS_PERMISSION
            if kind == "idle_prompt" or "waiting for your input" in message.lower():
                return AgentState.IDLE
        return None


def hook_settings() -> dict[str, object]:
    """Settings (for `--settings`, never the user's files) that report turn ends and
    permission prompts to swarm. The command can never fail the hook: a Stop hook that
    exits 2 would make Claude Code go on working."""
    hook = [{"hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 10}]}]
    return {"hooks": {"Stop": hook, "Notification": hook}}


def input_box(lines: list[str]) -> str | None:
    """The input box's text, prompt mark removed; None when the screen shows no box."""
    box = _box([ln.rstrip() for ln in lines])
    return box[0] if box else None


def _box(lines: list[str]) -> tuple[str, int, int] | None:
    """The input box's text and the indexes of its top and bottom rules: the last two
    full-width rules with a line starting `❯` (column 0) right under the first."""
    rules = [i for i, ln in enumerate(lines) if RULE.match(ln)]
    for top, bottom in zip(reversed(rules[:-1]), reversed(rules[1:]), strict=True):
        body = lines[top + 1 : bottom]
        if body and body[0].startswith("❯"):
            first = body[0][1:].strip()
            rest = [ln[2:] if ln.startswith("  ") else ln.strip() for ln in body[1:]]
            return "\n".join([first, *rest]).strip(), top, bottom
    return None


def _dialog(lines: list[str]) -> str | None:
    """A permission or first-run dialog's question, with what it is about; None if none."""
    tail = lines[-DIALOG_LINES:]
    if not any(CANCEL.search(ln) for ln in tail[-3:]):
        return None
    for i in range(len(tail) - 1, -1, -1):
        m = QUESTION.match(tail[i])
        if m is None:
            continue
        question = m.group(1).strip()
        if not any(OPTION.match(ln) for ln in tail[i + 1 :]):
            return None
        return _with_subject(question, tail[:i])
    return None


def _options(tail: list[str]) -> tuple[tuple[Option, ...], int | None]:
    """The dialog's options: a numbered list under the question (picked by number, so no
    cursor), else the `❯`-marked group of lines above `Esc to cancel` (one option a line,
    walked with the arrows from the mark)."""
    at = next((i for i in range(len(tail) - 1, -1, -1) if QUESTION.match(tail[i])), None)
    if at is None:
        return (), None
    below = tail[at + 1 :]
    end = next((i for i, ln in enumerate(below) if CANCEL.search(ln)), len(below))
    below = below[:end]
    first = next((i for i, ln in enumerate(below) if NUMBERED.match(ln)), None)
    if first is not None:
        return numbered(below[first:])[0], None
    while below and not below[-1].strip():
        below.pop()
    start = len(below)
    while start > 0 and below[start - 1].strip():
        start -= 1
    group = below[start:]
    cursor = next((i for i, ln in enumerate(group) if ln.lstrip().startswith("❯")), None)
    if cursor is None or len(group) > 9:
        return (), None
    labels = [ln.strip().removeprefix("❯").strip() for ln in group]
    return tuple((str(i + 1), label) for i, label in enumerate(labels)), cursor


def _with_subject(question: str, above: list[str]) -> str:
    """`Do you want to proceed?` names nothing: add the dialog's title and its command."""
    start = max((i for i, ln in enumerate(above) if RULE.match(ln)), default=-1)
    body = [ln.strip() for ln in above[start + 1 :]]
    if not body or not body[0]:
        return question
    title = body[0].rstrip(":")
    dashed = [i for i, ln in enumerate(body) if DASHED.match(ln)]
    subject = ""
    if len(dashed) >= 2:
        inner = [ln for ln in body[dashed[0] + 1 : dashed[1]] if ln]
        subject = inner[0] if inner else ""
    about = f"{title}: {subject}" if subject else title
    if len(about) > 100:
        about = about[:99] + "…"
    return f"{question} ({about})"


def _context_left(lines: list[str]) -> int | None:
    for ln in lines[-12:]:
        if m := UNTIL_COMPACT.search(ln):
            return int(m.group(1) or m.group(2))
        if m := USED.search(ln):
            return max(0, 100 - int(m.group(1)))
        if COMPACT_NEXT.search(ln):
            return 0
    return None
