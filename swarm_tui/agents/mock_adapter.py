"""Reads the mock agent's screen exactly the way the real CLIs' adapters read theirs."""

from __future__ import annotations

import re

from swarm_tui.agents.base import Adapter, AgentState, Reading, python_module
from swarm_tui.config.layout import ResolvedAgent

BUSY = re.compile(r"esc to interrupt|ctrl\+c to interrupt")
STARTING = re.compile(r"^\S Starting ")
QUESTION = re.compile(r"Do you want to (.+?)\?")
CONTEXT = re.compile(r"(\d+)% context left")
RULE = re.compile(r"^─{8,}$")


class MockAdapter(Adapter):
    name = "mock"
    submit_delay = 0.15
    idle_quiet = 0.8
    reads_input_box = True

    def launch(self, agent: ResolvedAgent) -> str:
        args = ["--name", agent.name, "--seed", str(agent.index + 1)]
        if agent.model:
            args += ["--model", agent.model]
        return python_module("swarm_tui.agents.mock", *args, *agent.args)

    def read(self, lines: list[str]) -> Reading:
        tail = [ln.rstrip() for ln in lines if ln.strip()][-14:]
        context = None
        for ln in reversed(tail):
            m = CONTEXT.search(ln)
            if m:
                context = int(m.group(1))
                break
        for ln in tail:
            m = QUESTION.search(ln)
            if m:
                return Reading(AgentState.NEEDS_PERMISSION, None, m.group(1), context)
        if any(STARTING.search(ln) for ln in tail):
            return Reading(AgentState.STARTING, None, "", context)
        draft = input_box(tail)
        if any(BUSY.search(ln) for ln in tail):
            return Reading(AgentState.WORKING, draft, "", context)
        if draft is None:
            return Reading(None, None, "", context)
        return Reading(AgentState.IDLE, draft, "", context)


def input_box(lines: list[str]) -> str | None:
    """The text between the last two rules, prompt marks removed; None without a box."""
    rules = [i for i, ln in enumerate(lines) if RULE.match(ln.strip())]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    body = lines[top + 1 : bottom]
    if not body or not body[0].lstrip().startswith("❯"):
        return None
    text = [body[0].lstrip()[1:].strip()] + [ln.strip() for ln in body[1:]]
    return "\n".join(text).strip()


