"""Cursor's agent CLI (`agent`, formerly `cursor-agent`): launch, headless, a cautious read.

UNTESTED AGAINST THE REAL PROGRAM. Cursor ships its CLI only through a script from
cursor.com (`curl https://cursor.com/install | bash`, into ~/.local/bin), not through a package
registry, and it needs a Cursor login or CURSOR_API_KEY to talk to Cursor's servers: neither
is reachable from swarm's offline test environment. What this adapter knows comes from
Cursor's documentation (docs.cursor.com/cli: `-p/--print`, `--output-format
text|json|stream-json`, `--model`, `--mode ask|plan`, `--trust`, `-f/--force`) and from the
screen strings other multiplexers match on (kbwo/ccmanager's Cursor detector):

- busy: the footer says `ctrl+c to stop`; a spinner line reads `⬡ Reading…` / `⬢ Grepping..`;
- a question: `Run this command?` / `Allow this web search?` with options such as
  `→ Run (once) (y)`, `Run Everything (shift+tab)`, `Skip (esc or n)`, or `… (y) (enter)` /
  `Keep (n)` for edits.

The idle input box's exact form is not documented, so `read` never claims idle from the
screen: with no busy or question marks on it, quiet time decides (`reads_input_box = False`)
and submission is not verified from the screen.
"""

from __future__ import annotations

import re

from swarm_tui.agents.base import Adapter, AgentState, Reading, command_line
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

BUSY = re.compile(r"ctrl\+c to stop", re.I)
SPINNER = re.compile(r"^\s*[⬡⬢] \S+ing(?:.*…|.*\.{2,})")
OPTION = re.compile(r"\((?:y|n|esc or n)\)(?:\s*\(enter\))?\s*$|\bSkip \(esc or n\)", re.I)
QUESTION = re.compile(r"^\s*((?:Run|Allow|Apply|Keep|Delete|Write|Do you)\b[^?]{0,80}\?)")
TAIL = 12  # only the bottom of the screen is chrome; the transcript may quote anything


class CursorAdapter(Adapter):
    name = "cursor"
    executable = "agent"
    family = ""  # Cursor routes to several model families; the model name tells which
    submit_delay = 0.2
    idle_quiet = 2.0
    reads_input_box = False  # its idle box is undocumented: never claim readiness from it

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return command_line([*self.program(agent), *model, *agent.args])

    def headless(self, model: str) -> list[str]:
        # print mode; `--trust` because print mode refuses an untrusted folder instead of
        # asking; `--mode ask` keeps a judge read-only (print mode otherwise has full write)
        return [
            self.executable,
            "-p",
            "--output-format",
            "text",
            "--trust",
            "--mode",
            "ask",
            *(["--model", model] if model else []),
        ]

    def read(self, lines: list[str]) -> Reading:
        shown = [ln.rstrip() for ln in lines if ln.strip()][-TAIL:]
        if not shown:
            return Reading(None)
        if any(OPTION.search(ln) for ln in shown):
            question = next((m.group(1) for ln in shown if (m := QUESTION.search(ln))), "")
            return Reading(AgentState.NEEDS_PERMISSION, None, question.rstrip("?"))
        if any(BUSY.search(ln) for ln in shown[-4:]) or any(SPINNER.search(ln) for ln in shown):
            return Reading(AgentState.WORKING)
        return Reading(None)

    def submitted(self, before: list[str], after: list[str], text: str) -> bool | None:
        return None  # the input box's form is unknown: the screen cannot confirm
