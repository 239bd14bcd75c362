"""What every agent CLI adapter knows: how to launch the CLI and how to read its screen."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from enum import StrEnum

from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

# Escape sequences as ECMA-48 frames them, so that any parameters pass: CSI takes parameter
# bytes 0x30-0x3F (digits and `:;<=>?`: `ESC[4:3m`, `ESC[58:2::255:0:0m`, `ESC[?2004h`),
# intermediates 0x20-0x2F and one final byte; the string sequences (OSC such as OSC 8
# hyperlinks, DCS, SOS, PM, APC) run to BEL or ST (`ESC \`), or to the end of the line when
# the capture cut them; any other escape is ESC, intermediates, one final byte (`ESC(B`,
# `ESC7`, `ESC=`), and a stray ESC goes too. The C1 forms of CSI and OSC (U+009B, U+009D)
# count as well.
ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[P\]X^_]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b(?:[ -/]*[0-~])?"
)


def program(agent: ResolvedAgent, default: str) -> list[str]:
    """The executable's words: the layout's `command` when it names one (a CLI installed off
    PATH, e.g. ~/.local/bin/agent), else the CLI's usual name."""
    return shlex.split(agent.command) if agent.command.strip() else [default]


SESSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{7,63}")  # a conversation's id, as CLIs write it


def command_line(argv: list[str]) -> str:
    """`argv` as one shell command line, each word quoted, except that a leading `~/` stays
    unquoted so the shell on the agent's host expands it to that host's home."""
    return " ".join(
        "~/" + shlex.quote(w[2:]) if w.startswith("~/") and w[2:] else shlex.quote(w) for w in argv
    )


def escape_own_commands(text: str, commands: frozenset[str]) -> str:
    """Text a CLI would take as its own input rather than the model's — a leading `/word`
    that is not one of its `commands` (refused as unknown), or a leading `!` (run as a
    shell command) — goes in after a space, which the CLI drops: the model gets it as typed."""
    if text.startswith("!"):
        return " " + text
    if text.startswith("/"):
        word = re.split(r"\s", text[1:], maxsplit=1)[0]
        if word not in commands:
            return " " + text
    return text


def plain(line: str) -> str:
    """A captured line without escape sequences."""
    return ANSI.sub("", line)


class AgentState(StrEnum):
    """What the agent is doing, as the sidebar shows it."""

    STARTING = "starting"
    WORKING = "working"
    IDLE = "idle"
    NEEDS_PERMISSION = "needs-permission"
    EXITED = "exited"
    UNREACHABLE = "unreachable"  # its host's link is down: what it does is unknown


Option = tuple[str, str]  # one choice of a dialog: (its number "1".."9", its label)


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading of a screen by an adapter.

    `state` is None when the screen alone cannot tell (the tracker then uses quiet time);
    `draft` is the input box's text, None when no input box is visible. A dialog's
    `options` are numbered 1, 2 … in the order the screen lists them (whatever keys the CLI
    itself takes); `cursor` is the index of the one its selection mark is on, for a dialog
    answered by moving that mark (None when each option has a key of its own).
    """

    state: AgentState | None
    draft: str | None = None
    question: str = ""
    context_left: int | None = None
    options: tuple[Option, ...] = ()
    cursor: int | None = None


class Adapter:
    """Base adapter; subclasses set the class attributes and override `read` / `launch`."""

    name = "base"
    submit_delay = 0.15  # seconds between the text and its Enter
    idle_quiet = 1.5  # seconds without output before a turn counts as finished
    verify_timeout = 2.0  # seconds to see the input box empty after Enter
    clear_draft_keys: tuple[str, ...] = ("C-u",)
    reads_input_box = False  # True when `read` finds the input box (and so readiness)
    reads_screen = True  # False: `read` learns nothing from the screen, so skip it
    # the smallest window (columns, rows) this CLI's screen is read right in: a tile smaller
    # than this shows the bottom-left of a window this size (Gemini CLI and Codex misread
    # at 44x20; 80x24 is what every CLI lays out for)
    min_window = (80, 24)
    family = ""  # model family ("anthropic", "openai", "google" ...): judges warn on a match
    fresh_command = ""  # typed to start a fresh conversation ("/clear"); "" = restart process
    executable = ""  # the CLI's usual program name; a layout's `command` replaces it
    answer_gap = 0.1  # seconds between two keys of a dialog's answer (arrows, then Enter)

    def program(self, agent: ResolvedAgent) -> list[str]:
        """The words that run this agent's CLI: its layout `command`, else `executable`."""
        return program(agent, self.executable)

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        """The shell command line that starts the CLI in the agent's window."""
        raise NotImplementedError

    def read(self, lines: list[str]) -> Reading:
        """Read the state from the screen's plain lines (no escape sequences)."""
        return Reading(None)

    def typed_text(self, text: str) -> str:
        """The text to paste for a message (e.g. escape what the CLI would take as a
        command of its own and swallow)."""
        return text

    def headless(self, model: str) -> list[str]:
        """argv that reads a prompt on stdin and prints the answer (for judges); [] if none."""
        return []

    def hook_state(self, payload: dict[str, object]) -> AgentState | None:
        """The state a structured signal (`swarm hook <cli>` with the CLI's JSON) means."""
        return None

    def session_id(self, payload: dict[str, object]) -> str:
        """The conversation a structured signal comes from ("" when it does not say): what
        `resume` takes to bring that conversation back."""
        return ""

    def resume(self, agent: ResolvedAgent, ctx: LaunchContext, session: str) -> str:
        """The command line that starts the CLI back in conversation `session` (after its
        tmux server was gone); "" when this CLI cannot resume one."""
        return ""

    def with_colours(self, screen: list[str], reading: Reading) -> Reading:
        """`reading` (of this screen's plain text) completed from the captured `screen`,
        escape sequences and all: what only colours show (the selected option of a dialog
        that marks it so)."""
        return reading

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """The keys that pick option `index` (0-based) of the dialog `reading` shows, as
        this CLI takes them (tested against the real CLI)."""
        from swarm_tui.agents.answers import CannotAnswer

        raise CannotAnswer(
            f"{self.name}: swarm does not answer this CLI's dialogs (its keys "
            "are not tested); attach to answer it"
        )

    def submitted(self, before: list[str], after: list[str], text: str) -> bool | None:
        """Whether the text left the input box; None when this CLI's screen cannot tell."""
        draft = self.read(after).draft
        if draft is None:
            return None
        return draft.strip() == ""
