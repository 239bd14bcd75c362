"""Reads the mock agent's screen exactly the way the real CLIs' adapters read theirs."""

from __future__ import annotations

import re
import shlex

from swarm_tui.agents.answers import numbered
from swarm_tui.agents.base import Adapter, AgentState, Reading
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

BUSY = re.compile(r"esc to interrupt|ctrl\+c to interrupt")
# its spinner's line, even cut by a window too narrow for the whole of it
SPINNING = re.compile(r"^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working…")
STARTING = re.compile(r"^\S Starting ")
QUESTION = re.compile(r"Do you want to (.+?)\?")
CONTEXT = re.compile(r"(\d+)% context left")
RULE = re.compile(r"^─{8,}$")


class MockAdapter(Adapter):
    name = "mock"
    min_window = (44, 16)  # its dialog box is 44 wide
    submit_delay = 0.15
    idle_quiet = 0.8
    reads_input_box = True
    fresh_command = "/clear"

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        args = ["--name", agent.name, "--seed", str(agent.index + 1)]
        if agent.model:
            args += ["--model", agent.model]
        return f"{ctx.mock_agent} {shlex.join([*args, *agent.args])}"

    def option_keys(self, reading: Reading, index: int) -> list[str]:
        return [reading.options[index][0]]  # the mock takes an option's number

    def read(self, lines: list[str]) -> Reading:
        # only the CLI's own chrome counts: the transcript may quote any of these words
        shown = [ln.rstrip() for ln in lines if ln.strip()]
        if not shown:
            return Reading(None)
        m = CONTEXT.search(shown[-1])
        context = int(m.group(1)) if m else None
        tail = shown[-8:]
        for i, ln in enumerate(tail):
            if ln.startswith("│") and (q := QUESTION.search(ln)):
                body = [b[1:] for b in tail[i + 1 :] if b.startswith("│")]
                options, cursor = numbered(body)
                return Reading(
                    AgentState.NEEDS_PERMISSION, None, q.group(1), context, options, cursor
                )
        box = _box(shown)
        if box is None:
            return Reading(None, None, "", context)
        draft, top = box
        status = shown[top - 1] if top > 0 else ""
        if STARTING.search(status):
            return Reading(AgentState.STARTING, None, "", context)
        if BUSY.search(status) or SPINNING.match(status):
            return Reading(AgentState.WORKING, draft, "", context)
        return Reading(AgentState.IDLE, draft, "", context)


def input_box(lines: list[str]) -> str | None:
    """The input box's text, prompt mark removed; None when the screen shows no box."""
    box = _box(lines)
    return box[0] if box else None


def _box(lines: list[str]) -> tuple[str, int] | None:
    """The input box's text and the index of its top rule."""
    rules = [i for i, ln in enumerate(lines) if RULE.match(ln.strip())]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    body = lines[top + 1 : bottom]
    if not body or not body[0].lstrip().startswith("❯"):
        return None
    text = [body[0].lstrip()[1:].strip()] + [ln.strip() for ln in body[1:]]
    return "\n".join(text).strip(), top
