"""Gemini CLI: launch it, read its screen, type into it (tested with @google/gemini-cli 0.61.0).

The bottom of Gemini CLI's screen (an Ink app), from the top down:

    ⠼ Thinking... (esc to cancel, 1s)          ? for shortcuts    <- status: busy or not
    ──────────────────────────────────────────────                 <- rule
     Shift+Tab to accept edits                                     <- mode hint (may vary)
     >   Type your message or @path/to/file                        <- the input box
     workspace (/directory)   sandbox   /model                     <- footer

- idle: the input box is there and the status line above the rule has no `esc to cancel`;
  an empty box shows the placeholder `Type your message or …`; a multi-line draft goes on
  under the `> ` line, indented.
- working: the status line says `(esc to cancel, Ns)`. The box stays usable (Gemini CLI
  queues what is typed meanwhile), so the draft is still read.
- needs permission: a bordered dialog replaces the box: `Allow execution of [Shell]?`,
  `Apply this change?` … above numbered options `● 1. Allow once`, `2. Allow for this
  session`, `3. No, suggest changes (esc)`.
- starting: the banner (`Gemini CLI v0.61.0`) with no input box yet.

Submitting: a bracketed paste lands in the box as one draft (multi-line kept); an Enter
within ~0.1 s of a paste is taken as a newline (measured: 0.1 s fails, 0.2 s works), so
Enter follows after `submit_delay`. Ctrl-C clears a non-empty draft (Ctrl-U clears only one
line of it); on an empty box Ctrl-C would start the exit, so it is sent only for a draft.
"""

from __future__ import annotations

import re

from swarm_tui.agents.answers import numbered
from swarm_tui.agents.base import Adapter, AgentState, Option, Reading, command_line
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

RULE = re.compile(r"^\s*─{8,}\s*$")
BOX = re.compile(r"^ ([>!*]) (.*)$")  # `>` prompt, `!` shell mode, `*` YOLO/approval modes
PLACEHOLDER = re.compile(r"^\s*Type your (?:message|shell command)\b")
FOOTER = re.compile(r"^\s*workspace \(/directory\)")
BUSY = re.compile(r"\(esc to cancel, [^)]*\)")
OPTION = re.compile(r"^[│\s]*(?:●\s*)?1\.\s+(?:Allow once|Yes\b)")
BANNER = re.compile(r"Gemini CLI v\d")


class GeminiAdapter(Adapter):
    name = "gemini"
    executable = "gemini"
    family = "google"
    submit_delay = 0.4
    idle_quiet = 1.5
    verify_timeout = 3.0
    clear_draft_keys = ("C-c",)
    reads_input_box = True
    fresh_command = "/clear"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return command_line([*self.program(agent), *model, *agent.args])

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        question = _dialog(shown)
        if question is not None:
            options, _ = _options(shown)
            return Reading(AgentState.NEEDS_PERMISSION, None, question, None, options)
        box = _box(shown)
        if box is None:
            if any(BANNER.search(ln) for ln in shown):
                return Reading(AgentState.STARTING)
            return Reading(None)
        draft, rule = box
        status = next((ln for ln in reversed(shown[:rule]) if ln.strip()), "")
        if BUSY.search(status):
            return Reading(AgentState.WORKING, draft)
        return Reading(AgentState.IDLE, draft)

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        return [reading.options[index][0]]  # an option's number picks it at once

    def headless(self, model: str) -> list[str]:
        """Gemini CLI answering the prompt on stdin (`-p ""` appends nothing to it)."""
        argv = [self.executable, "-p", "", "--output-format", "text"]
        return [*argv, "--model", model] if model else argv


def _dialog(shown: list[str]) -> str | None:
    """The question of a permission dialog at the bottom of the screen, else None."""
    tail = shown[-16:]
    at = next((i for i in range(len(tail) - 1, -1, -1) if OPTION.match(tail[i])), None)
    if at is None or any(BOX.match(ln) for ln in tail[at:]):
        return None
    for ln in reversed(tail[:at]):
        text = ln.strip(" │╭╮╰╯─")
        if text.endswith("?"):
            return text
    return ""


def _options(shown: list[str]) -> tuple[tuple[Option, ...], int | None]:
    """The dialog's numbered options, its frame (`│`) taken off."""
    tail = shown[-16:]
    at = next((i for i in range(len(tail) - 1, -1, -1) if OPTION.match(tail[i])), None)
    if at is None:
        return (), None
    inside = []
    for ln in tail[at:]:
        if not ln.lstrip().startswith("│"):
            break  # the frame's bottom edge
        inside.append(ln.strip().strip("│").rstrip())
    return numbered(inside)


def _box(shown: list[str]) -> tuple[str, int] | None:
    """The input box's draft and the index of the rule above it; None with no box."""
    for i in range(len(shown) - 1, -1, -1):
        m = BOX.match(shown[i])
        if m is None:
            continue
        rule = next((j for j in range(i - 1, max(-1, i - 4), -1) if RULE.match(shown[j])), None)
        if rule is None:
            return None
        if PLACEHOLDER.match(m.group(2)):
            return "", rule
        body = [m.group(2)]
        for ln in shown[i + 1 :]:
            if not ln.strip() or FOOTER.search(ln):
                break
            body.append(ln[3:] if ln.startswith("   ") else ln.strip())
        return "\n".join(body).strip(), rule
    return None
