"""codex: OpenAI's Codex CLI (tested with @openai/codex 0.171.0).

The screen, bottom up (120x40, captures in tests/fixtures/screens/codex-*.txt):

    • Working (3s • esc to interrupt)          status line, only while a turn runs and no
                                               answer text is streaming
    › fix the tests                            the input box: `›`, then the draft (further
      and run them                             lines indented two spaces) or a placeholder
                                               (blank line)
      gpt-5 default · Context 97% left · ~/x   status line items (`tui.status_line`)
      ← for agents · ? for shortcuts           key hints; blank while a draft is typed

An approval replaces the input box with a dialog ending in `Press enter to confirm or esc to
cancel`; other choices (a first start's model-choice screen: a title such as `Meet GPT-6 Sol`,
a paragraph, `› 1. Try new model` / `2. Use existing model`, `enter/esc confirm · ^c quit`)
have no question line. A finished turn leaves `Worked for 5s • 10:12` right above the box;
while an answer streams nothing in the chrome says so, so `read` answers "cannot tell" and the
tracker goes by output. Codex runs its `notify` program with a JSON argument when a turn
completes: `agent-turn-complete`, also for the title it makes for a new thread in a side
thread.

Typing: a message that starts with `/` is a command to Codex; an unknown `/word` is refused
(`• Unrecognized command '/word'. …` above the box), the draft is kept and the cursor left at
its start, and a lone `/prefix` runs the command its popup selects. A message that starts with
`!` runs as a shell command. Both go in after a space, which Codex trims before the model
sees the text.
"""

from __future__ import annotations

import json
import re

from swarm_tui.agents.answers import NUMBERED, arrows, numbered, shortcut
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

PROMPT = "›"
PLACEHOLDERS = frozenset({"Ask Codex to do anything", "Ask a follow-up question"})
BUSY = re.compile(r"^\S\s+\S.*\(\d+[hms\d ]*.*esc to interrupt\)$")
TURN_END = re.compile(r"^Worked for .+ • \d{1,2}:\d{2}(?::\d{2})?(?:\s?[AP]M)?$")
CONTEXT = re.compile(r"Context (\d+)% left|(\d+)% context left")
DIALOG_END = "Press enter to confirm or esc to cancel"
OPTION = re.compile(r"^› \d+\. ")
QUESTION = re.compile(r"^((?:Would you like|Do you want|Allow) .*\?)")
COMMAND = re.compile(r"^\$ (.+)")
TRANSCRIPT = ("› ", "• ", "◦ ", "■ ", "✔ ", "✗ ", "└ ")
STARTING_HINT = "? for shortcuts"  # the hints before the session is configured
TITLE_PROMPT = "Generate a concise, single-line task title"  # Codex's own side thread
UNRECOGNIZED = re.compile(r"^• Unrecognized command '/[^']*'\. Type \"/\" for a list")
TITLE_MAX = 100  # characters of a dialog's title and options kept as its question

# Codex 0.171.0's own slash commands, as the Linux build accepts them: its `/` popup, and the
# names it takes without listing them (aliases such as `quit`, `btw`, `clean`; debug ones),
# measured by typing `/word text` into the real CLI; plus `apps` and `fast`, which it accepts
# only with a ChatGPT login (connectors, a model's fast tier). Text starting with any other
# `/word` is refused with "Unrecognized command", so it is typed after a space.
COMMANDS = frozenset(
    """
agents approve apps archive btw cd clean clear compact config copy cwd daemon daybreak
debug-config debug-m-drop debug-m-update delete diff exit experimental export fast feedback
fork goal hooks ide import init keymap logout mcp memories mention model new permissions pet
pets plan plugins presets ps pwd quit raw rc recap remote rename resume review side skills
status statusline stop subagents theme title tui usage vim voice warnings worktree
""".split()
)


class CodexAdapter(Adapter):
    name = "codex"
    executable = "codex"
    family = "openai"
    reads_input_box = True
    idle_quiet = 2.0
    submit_delay = 0.2  # Codex takes an Enter within 120 ms of fast input as a newline
    verify_timeout = 3.0
    # wherever the cursor is (a refused command leaves it at the draft's start, where C-u
    # clears nothing): C-u clears to the start of its line, a second C-u joins the line to
    # the one above; C-k clears to the end, a second joins the next line. 64 of each clear a
    # 32-line draft (longer pastes show as one marker). Never C-c: on an empty box it quits.
    clear_draft_keys = ("C-u",) * 64 + ("C-k",) * 64
    fresh_command = "/new"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        return self._line(agent, ctx, [])

    def resume(self, agent: ResolvedAgent, ctx: LaunchContext, session: str) -> str:
        return self._line(agent, ctx, ["resume", session])

    def session_id(self, payload: dict[str, object]) -> str:
        sid = payload.get("thread-id")  # the notify program's turn-complete event
        if _side_thread(payload):  # an ephemeral thread: `codex resume` cannot find it
            return ""
        return sid if isinstance(sid, str) and SESSION.fullmatch(sid) else ""

    def _line(self, agent: ResolvedAgent, ctx: LaunchContext, verb: list[str]) -> str:
        # --no-daemon: otherwise the first Codex on a machine starts a shared background
        # server that runs every later session's turns, tools and notify program with the
        # first agent's environment (its SWARM_AGENT and SWARM_TOKEN)
        argv = [*self.program(agent), *verb, "--no-daemon"]
        if agent.model:
            argv += ["--model", agent.model]
        if ctx.state_dir:  # writable in its sandbox: a fresh start's handoff note goes there
            argv += ["--add-dir", ctx.state_dir]
        if agent.hooks:
            notify = [f"{ctx.bin_dir}/swarm", "hook", "codex"]
            argv += ["-c", "notify=[" + ", ".join(json.dumps(w) for w in notify) + "]"]
        return command_line([*argv, *agent.args])

    def headless(self, model: str) -> list[str]:
        # `-` reads the prompt from stdin; only the final answer goes to stdout
        argv = [self.executable, "exec", "--skip-git-repo-check", "--ephemeral", "--color", "never"]
        if model:
            argv += ["--model", model]
        return [*argv, "-"]

    def typed_text(self, text: str) -> str:
        """What to paste for `text`: text Codex would take as a command of its own (an
        unknown `/word`, a `!` shell command) goes in after a space (see the module doc)."""
        return escape_own_commands(text, COMMANDS)

    def hook_state(self, payload: dict[str, object]) -> AgentState | None:
        if payload.get("type") != "agent-turn-complete":
            return None
        if _side_thread(payload):
            return None  # the thread-title side turn ends while the real turn may go on
        return AgentState.IDLE

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        if shown[-1].strip() == DIALOG_END:
            options, cursor = _options(shown)
            return Reading(
                AgentState.NEEDS_PERMISSION, None, _question(shown), None, options, cursor
            )
        box = _box(shown)
        if box is None:
            return Reading(None)
        top, draft, footer = box
        context = _context(footer)
        if OPTION.match(shown[top]):
            # a choice (approval or question) without the usual footer: Enter would pick
            options, cursor = _options(shown)
            return Reading(
                AgentState.NEEDS_PERMISSION, None, _question(shown), context, options, cursor
            )
        if [ln.strip() for ln in footer] == [STARTING_HINT]:
            return Reading(AgentState.STARTING, None, "", context)
        above = next((ln.strip() for ln in reversed(shown[:top]) if ln.strip()), "")
        if BUSY.match(above):
            return Reading(AgentState.WORKING, draft, "", context)
        if (
            TURN_END.match(above)
            or UNRECOGNIZED.match(above)
            or not any(ln.lstrip().startswith(TRANSCRIPT) for ln in shown[:top])
        ):
            # a turn ended, none began, or a command was refused (its draft kept)
            return Reading(AgentState.IDLE, draft, "", context)
        # an answer is streaming, a turn was interrupted or a picker is open above the box
        # (Enter would pick from it): only output and quiet can tell, and it is not ready
        return Reading(None, draft, "", context)

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """An approval's options name their keys (`(y)`, `(p)`, `(esc)`); a choice without
        them (the model-choice screen) is walked with the arrows from the `›`, then Enter."""
        key = shortcut(reading.options[index][1])
        return [key] if key is not None else arrows(reading.cursor, index)

    def submitted(self, before: list[str], after: list[str], text: str) -> bool | None:
        reading = self.read(after)
        if reading.state in (AgentState.NEEDS_PERMISSION, AgentState.STARTING):
            return True  # the turn began and asks for approval; `/new` began a new session
        if reading.draft is None:
            return None
        return reading.draft.strip() == ""


def _box(shown: list[str]) -> tuple[int, str, list[str]] | None:
    """The input box: its line index, its draft ("" for a placeholder) and the footer lines;
    None when no box is drawn at the bottom (a dialog or an overlay covers it)."""
    top = next(
        (
            i
            for i in range(len(shown) - 1, -1, -1)
            if shown[i] == PROMPT or shown[i].startswith(PROMPT + " ")
        ),
        None,
    )
    if top is None or len(shown) - top > 40:
        return None
    below = shown[top + 1 :]
    blanks = [i for i, ln in enumerate(below) if not ln.strip()]
    if blanks:
        body, footer = below[: blanks[-1]], below[blanks[-1] + 1 :]
    else:
        body, footer = below, []
    if any(ln.strip() and not ln.startswith("  ") for ln in body):
        return None  # a transcript line follows: that `›` is an old message, not the box
    text = "\n".join([shown[top][len(PROMPT) :].strip(), *(ln[2:] for ln in body)]).strip()
    return top, ("" if text in PLACEHOLDERS else text), footer


def _context(footer: list[str]) -> int | None:
    for ln in footer:
        if m := CONTEXT.search(ln):
            return int(m.group(1) or m.group(2))
    return None


def _question(shown: list[str]) -> str:
    """The dialog's question, with the command it would run when it shows one; for a choice
    without a question line, its title and options. Never empty."""
    question, command = "", ""
    for ln in reversed(shown[-30:]):
        text = ln.strip()
        if not command and (m := COMMAND.match(text)):
            command = m.group(1)
        if m := QUESTION.match(text):
            question = m.group(1)
            break
    if question:
        return f"{question} {command}".strip() if command else question
    return _choice(shown)


def _options(shown: list[str]) -> tuple[tuple[Option, ...], int | None]:
    """The dialog's numbered options (the last list on the screen) and where `›` is."""
    tail = shown[-30:]
    last = next((i for i in range(len(tail) - 1, -1, -1) if NUMBERED.match(tail[i])), None)
    if last is None:
        return (), None
    first = last
    while first > 0 and NUMBERED.match(tail[first - 1]):
        first -= 1
    return numbered(tail[first:])


def _choice(shown: list[str]) -> str:
    """`Title: 1. First / 2. Second` for a choice without a question line: the title is the
    first line of the text above the options, up to the transcript or the screen's top."""
    at = next((i for i in range(len(shown) - 1, -1, -1) if OPTION.match(shown[i])), None)
    if at is None:
        return "Codex asks for a choice"
    first = at
    while first > 0 and re.match(r"^\s*\d+\. ", shown[first - 1].removeprefix(PROMPT)):
        first -= 1
    last = at
    while last + 1 < len(shown) and re.match(r"^\s*\d+\. ", shown[last + 1].removeprefix(PROMPT)):
        last += 1
    options = [ln.removeprefix(PROMPT).strip() for ln in shown[first : last + 1]]
    above = []
    for ln in reversed(shown[:first]):
        if ln.startswith(TRANSCRIPT):
            break
        above.append(ln.strip())
    title = next((ln for ln in reversed(above) if ln), "Codex asks for a choice")
    question = f"{title.rstrip(':')}: {' / '.join(options)}"
    return question if len(question) <= TITLE_MAX else question[: TITLE_MAX - 1] + "…"


def _side_thread(payload: dict[str, object]) -> bool:
    """Codex names a new conversation in a thread of its own, which runs beside the first
    turn and reports its end through the notify program too, with its own thread id."""
    inputs = payload.get("input-messages")
    return isinstance(inputs, list) and bool(inputs) and str(inputs[0]).startswith(TITLE_PROMPT)
