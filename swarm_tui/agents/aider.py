"""aider: launch it, read its screen, type into it (tested with aider-chat 0.86.2).

aider is a prompt_toolkit prompt under a scrolling transcript (rich output, `--pretty`, the
default). What the bottom of the screen says:

- idle: a rule `────` and then the input box, whose every line starts with the prompt
  (`> `, or `ask> `, `architect> `, `multi> ` … when a chat mode is shown); the box's text,
  prompt removed, is the draft. Above the box may sit the names of the files in the chat.
- working: no box at the bottom. While aider waits for the first token a spinner line says
  `Waiting for <model>`; while it streams, the answer itself is the last line.
- needs permission: `confirm_ask` questions end the screen, e.g.
  `Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: ` or
  `Create new file? (Y)es/(N)o [Yes]: `; the subject (a file, a URL, a command) sits above.
- starting: the `Aider v0.86.2` banner with no prompt below it yet.

Submitting: a bracketed paste (multi-line too) lands in the box as one draft, and one Enter
submits all of it (Enter inserts a newline only in aider's `/multiline-mode`, which the
adapter does not use). aider's own `{ … }` multi-line syntax is not needed for pastes. Three
kinds of text would not reach the model as typed, so `prepare` escapes them with one leading
space (aider sends the space along; models ignore it): text starting with `!` (aider runs it
as a shell command), text starting with `/` whose first word is not an aider command (aider
says "Invalid command" and drops it), and a lone `{` / `{tag` line (it opens aider's
multi-line mode). A `/`-command such as `/clear` is typed as is.
"""

from __future__ import annotations

import re

from swarm_tui.agents.base import Adapter, AgentState, Option, Reading, command_line
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

# the input prompt: `> `, or the chat mode first (`ask> `, `architect multi> `); the trailing
# space is gone from a captured line when the line holds nothing else
PROMPT = re.compile(r"^(?:[a-z][\w-]*(?: multi)?|multi)?>(?: |$)")
RULE = re.compile(r"^─{8,}$")
QUESTION = re.compile(r"^(.*?) \(Y\)es/\(N\)o(?:/\([A-Z]\)[\w' ]+)* \[[^\]]*\]: ?(.*)$")
CHOICES = re.compile(r"\(Y\)es/\(N\)o(?:/\([A-Z]\)[\w' ]+)*(?= \[)")
LETTER = re.compile(r"\(([A-Z])\)([\w' ]*)")
SPINNER = re.compile(r"Waiting for \S+$|^[░█#= ]{10} \S")
BANNER = re.compile(r"^Aider v\d")
# aider 0.86.2's commands (`Commands.get_commands()`); text starting with `/` is a command
# when its first word is one of these or the start of exactly one of them (aider's rule)
COMMANDS = (
    "add",
    "architect",
    "ask",
    "chat-mode",
    "clear",
    "code",
    "commit",
    "context",
    "copy",
    "copy-context",
    "diff",
    "drop",
    "edit",
    "editor",
    "editor-model",
    "exit",
    "git",
    "help",
    "lint",
    "load",
    "ls",
    "map",
    "map-refresh",
    "model",
    "models",
    "multiline-mode",
    "paste",
    "quit",
    "read-only",
    "reasoning-effort",
    "report",
    "reset",
    "run",
    "save",
    "settings",
    "test",
    "think-tokens",
    "tokens",
    "undo",
    "voice",
    "weak-model",
    "web",
)
MULTILINE_OPENER = re.compile(r"\{[A-Za-z0-9]*")


def is_command(text: str) -> bool:
    """Whether aider would run `text` as one of its `/` commands."""
    if not text.startswith("/"):
        return False
    word = text.split(maxsplit=1)[0][1:]
    if not word:
        return False
    return word in COMMANDS or sum(c.startswith(word) for c in COMMANDS) == 1


class AiderAdapter(Adapter):
    name = "aider"
    executable = "aider"
    family = ""  # aider drives any model; the layout's model says which
    submit_delay = 0.2
    idle_quiet = 1.5
    # aider shows nothing for ~0.5 s after Enter (then its spinner), and preparing a very long
    # message takes longer: a rescue Enter too early would land on a question as "yes"
    verify_timeout = 6.0
    # end of buffer, select to its start, delete: clears a multi-line draft too (C-u clears
    # one line; C-c would count toward aider's double-Ctrl-C exit)
    clear_draft_keys = ("C-End", "C-S-Home", "BSpace")
    reads_input_box = True
    fresh_command = "/clear"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return command_line([*self.program(agent), *model, *agent.args])

    def typed_text(self, text: str) -> str:
        """The text to type so that aider sends exactly `text` to the model (see module doc)."""
        if text.startswith("!") or (text.startswith("/") and not is_command(text)):
            return " " + text
        if MULTILINE_OPENER.fullmatch(text.strip("\r\n")):
            return " " + text
        return text

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        last = shown[-1]
        if q := QUESTION.match(last):
            subject = shown[-2].strip() if len(shown) > 1 else ""
            question = q.group(1).strip()
            if subject and not RULE.match(subject) and not PROMPT.match(shown[-2]):
                question = f"{question} {subject}"
            return Reading(AgentState.NEEDS_PERMISSION, None, question, None, _options(last))
        box = _box(shown)
        if box is not None:
            return Reading(AgentState.IDLE, box)
        if SPINNER.search(last):
            return Reading(AgentState.WORKING)
        banner = [i for i, ln in enumerate(shown) if BANNER.match(ln)]
        inputs = [i for i, ln in enumerate(shown) if _is_input(shown, i)]
        if inputs and (not banner or inputs[-1] > banner[-1]):
            return Reading(AgentState.WORKING)  # an answer is coming in below the input
        if banner:
            return Reading(AgentState.STARTING)
        return Reading(None)  # a long answer has scrolled the input off: output decides

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """An option's letter (`(Y)es` is y), then Enter: aider asks on its prompt line."""
        return [reading.options[index][1][0].lower(), "Enter"]

    def submitted(self, before: list[str], after: list[str], text: str) -> bool | None:
        reading = self.read(after)
        if reading.state in (AgentState.WORKING, AgentState.NEEDS_PERMISSION):
            return True
        if reading.draft is None:
            return None
        return reading.draft.strip() == ""

    def headless(self, model: str) -> list[str]:
        """aider answering one message from stdin: no git, no edits applied without asking
        (`--yes-always` answers its questions), plain output, ask mode (a judge reads)."""
        argv = [
            self.executable,
            "--message-file",
            "/dev/stdin",
            "--yes-always",
            "--no-pretty",
            "--no-fancy-input",
            "--no-git",
            "--no-auto-commits",
            "--chat-mode",
            "ask",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--map-tokens",
            "0",
            "--no-restore-chat-history",
            "--input-history-file",
            "/dev/null",
            "--chat-history-file",
            "/dev/null",
        ]
        return [*argv, "--model", model] if model else argv


def _options(question: str) -> tuple[Option, ...]:
    """`(Y)es/(N)o/(D)on't ask again` as options: Yes, No, Don't ask again."""
    m = CHOICES.search(question)
    if m is None:
        return ()
    labels = [c.group(1) + c.group(2).rstrip() for c in LETTER.finditer(m.group(0))]
    return tuple((str(i + 1), label) for i, label in enumerate(labels))


def _is_input(shown: list[str], i: int) -> bool:
    """Line i is a prompt line right under a rule (an input box, current or earlier)."""
    return bool(PROMPT.match(shown[i])) and i > 0 and bool(RULE.match(shown[i - 1]))


def _box(shown: list[str]) -> str | None:
    """The draft in the input box at the bottom of the screen; None when there is no box.

    The box is the run of prompt lines at the bottom (a multi-line draft repeats the prompt
    on every line), directly under a rule or under the list of files in the chat."""
    top = len(shown)
    while top > 0 and PROMPT.match(shown[top - 1]):
        top -= 1
    if top == len(shown):
        return None
    # the rule sits right above the box, or above the chat's file list (a few short lines)
    above = shown[max(0, top - 6) : top]
    if not any(RULE.match(ln) for ln in above):
        return None
    text = [PROMPT.sub("", ln, count=1) for ln in shown[top:]]
    return "\n".join(text).strip()
