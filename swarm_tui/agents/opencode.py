"""opencode (sst/opencode, npm `opencode-ai`): launch, read its screen, run it headless.

Screens measured on opencode-ai 1.18.33 in a 120x40 tmux window (captures in
tests/fixtures/screens/opencode-*.txt). Its chrome, bottom up:

    ┃                                  <- input box: a left bar `┃` on every line,
    ┃  text of the draft (or blank)       one blank padding line above and below the text
    ┃
    ┃  Build · Fake Model Fake          <- agent · model · provider (always the last bar line)
    ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀       <- the box's bottom edge
     ■■■⬝⬝⬝⬝⬝  esc interrupt  …        <- footer: a progress bar (and `esc interrupt`) while busy

The empty box of a new session shows a placeholder, `Ask anything… "Fix broken tests"`; a long
paste shows as `[Pasted ~N lines]`. A permission ask replaces the box with
`△ Permission required`, a title (`# Shell command`) and `Allow once  Allow always  Reject`
(a row of buttons: left / right move the selection, which only colours show, Enter picks);
"Allow always" asks again, `△ Always allow` with the patterns and `Confirm  Cancel`.
The transcript marks the user's own messages with the same `┃` bar, so only the bar lines
directly above the agent/model line count as the box.
"""

from __future__ import annotations

import re
from dataclasses import replace

from swarm_tui.agents.answers import CannotAnswer, arrows
from swarm_tui.agents.base import Adapter, AgentState, Option, Reading, command_line
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

BAR = "┃"
BOX_BOTTOM = re.compile(r"^\s*╹▀{8,}")
# busy: a progress bar of ■/⬝ opens the footer (also while retrying a failed request,
# when `esc interrupt` gives way to the error), and `esc interrupt` follows it
BUSY = re.compile(r"^\s*[■⬝]{4,}|\besc interrupt\b")
PLACEHOLDER = re.compile(r'^Ask anything… ".*"$')
PERMISSION = re.compile(r"△ (Permission required|Always allow)")
ALWAYS = "Always allow"  # the second question after "Allow always"
DIALOGS: dict[str, tuple[re.Pattern[str], tuple[Option, ...]]] = {
    "Permission required": (
        re.compile(r"Allow once\s+Allow always\s+Reject"),
        (("1", "Allow once"), ("2", "Allow always"), ("3", "Reject")),
    ),
    # its Confirm makes the allowing permanent (until a restart): said, so `y` never picks it
    ALWAYS: (
        re.compile(r"\bConfirm\s+Cancel\b"),
        (("1", "Confirm: allow always"), ("2", "Cancel")),
    ),
}
HINT = "select"  # the options' row ends with `⇆ select  enter confirm`
SGR = re.compile(r"\x1b\[([0-9;:]*)m")


class OpencodeAdapter(Adapter):
    name = "opencode"
    executable = "opencode"
    family = ""  # opencode runs any provider's models: the family is the model's, not its own
    # opencode redraws ~every 100 ms and takes an Enter inside a paste's burst as a newline
    submit_delay = 0.3
    idle_quiet = 1.5
    verify_timeout = 3.0  # the first message switches from the home to the session view
    # ctrl+c clears a non-empty input (the injector clears only a non-empty draft; on an
    # empty box ctrl+c would exit, which is why this is never sent blind)
    clear_draft_keys = ("C-c",)
    reads_input_box = True
    fresh_command = "/new"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return command_line([*self.program(agent), *model, *agent.args])

    def headless(self, model: str) -> list[str]:
        # `opencode run` with no message reads the prompt from stdin and prints the answer
        return [self.executable, "run", *(["--model", model] if model else [])]

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines]
        while shown and not shown[-1].strip():
            shown.pop()
        if not shown:
            return Reading(None)
        bottoms = [i for i, ln in enumerate(shown) if BOX_BOTTOM.match(ln)]
        if not bottoms:
            return self._permission(shown)
        bottom = bottoms[-1]
        footer = next((ln for ln in shown[bottom + 1 :] if ln.strip()), "")
        box = _box(shown, bottom)
        if box is None:
            return Reading(None)
        draft, top = box
        if BUSY.search(footer) or _turn_pending(shown, top):
            return Reading(AgentState.WORKING, draft)
        return Reading(AgentState.IDLE, draft)

    def _permission(self, shown: list[str]) -> Reading:
        tail = shown[-16:]
        found = next(((i, m) for i, ln in enumerate(tail) if (m := PERMISSION.search(ln))), None)
        if found is None:
            return Reading(None)
        at, kind = found[0], found[1].group(1)
        choices, options = DIALOGS[kind]
        if not any(choices.search(ln) for ln in tail[at:]):
            return Reading(None)
        body = [_after_bar(ln) for ln in tail[at + 1 :]]
        if kind == ALWAYS:  # "Allow always" asks again: which patterns, until a restart
            patterns = [b[2:].strip() for b in body if b.startswith("- ")]
            said = next((b for b in body if b.strip()), "")
            return Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                f"{ALWAYS}: {', '.join(patterns) or said}",
                None,
                options,
            )
        title = next((b.lstrip("# ").strip() for b in body if b.strip()), "")
        command = next((b[2:].strip() for b in body if b.startswith("$ ")), "")
        question = f"{title}: {command}" if title and command else title or command
        return Reading(AgentState.NEEDS_PERMISSION, None, question, None, options)

    def with_colours(self, screen: list[str], reading: Reading) -> Reading:
        """The selected option, which only its colours show: it alone is drawn on a
        background of its own, the others on the row's (that of the `⇆ select` hint)."""
        if not reading.options:
            return reading
        labels = [label.split(":", 1)[0] for _, label in reading.options]  # as on screen
        for line in screen:
            backgrounds = _backgrounds(line, [*labels, HINT])
            if backgrounds is None:
                continue
            row = backgrounds.pop()
            selected = [i for i, bg in enumerate(backgrounds) if bg != row]
            if len(selected) == 1:
                return replace(reading, cursor=selected[0])
        return reading

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        """The options sit in a row: left and right move the selection (they wrap), Enter
        picks it. Only the colours say which is selected (see `with_colours`)."""
        if reading.cursor is None:
            raise CannotAnswer(
                "opencode: which option is selected cannot be told from its "
                "screen; attach to answer it"
            )
        return arrows(reading.cursor, index, down="Right", up="Left")


def _backgrounds(line: str, labels: list[str]) -> list[str] | None:
    """The background colour (its SGR parameters) each of `labels` is drawn on in the
    captured `line`, in order; None unless every label is on it."""
    found: list[str] = []
    background, at = "", 0
    for m in SGR.finditer(line + "\x1b[m"):
        text = line[at : m.start()]
        while len(found) < len(labels) and labels[len(found)] in text:
            text = text.split(labels[len(found)], 1)[1]
            found.append(background)
        at = m.end()
        params = m.group(1).split(";")
        for i, p in enumerate(params):
            if p in ("", "0", "49"):
                background = ""
            elif p == "48":
                background = ";".join(params[i : i + (3 if params[i + 1 : i + 2] == ["5"] else 5)])
            elif p.isdigit() and (40 <= int(p) <= 47 or 100 <= int(p) <= 107):
                background = p
    return found if len(found) == len(labels) else None


def _after_bar(line: str) -> str:
    return line.split(BAR, 1)[1].strip() if BAR in line else line.strip()


def _turn_pending(shown: list[str], top: int) -> bool:
    """The transcript ends with the user's message and nothing after it: the turn has been
    submitted, but opencode shows its busy footer only once the model's answer starts (after
    its title request; measured 0.5-3 s), and shows the box as empty and idle meanwhile."""
    column = shown[top].index(BAR)
    above = next((ln for ln in reversed(shown[:top]) if ln.strip()), "")
    return above.find(BAR) == column and not above[:column].strip()


def _box(shown: list[str], bottom: int) -> tuple[str, int] | None:
    """The draft in the box whose bottom edge is at `bottom`, and the index of the box's top
    line; None when no box is drawn."""
    if bottom < 1:
        return None
    column = shown[bottom].index("╹")
    model_line = shown[bottom - 1]
    if model_line.find(BAR) != column or not model_line[column + 1 :].strip():
        return None
    bar: list[str] = []
    for ln in reversed(shown[: bottom - 1]):
        if ln.find(BAR) != column or ln[:column].strip():
            break
        bar.append(ln[column + 1 :])
    bar.reverse()
    if len(bar) < 3:
        return None
    top = bottom - 1 - len(bar)
    # the box pads its text with one blank bar line above and below it
    text = "\n".join(ln.strip() for ln in bar[1:-1]).strip()
    return ("" if PLACEHOLDER.match(text) else text), top
