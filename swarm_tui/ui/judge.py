"""The judge pane, docked beside the grid: the judge agent's live screen (or the headless
judge's runs), and the latest verdicts with their reasons."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from swarm_tui.fleet.engine import Fleet
from swarm_tui.ui.tiles import AgentTile

VERDICT_STYLE = {"complete": "bold green", "incomplete": "bold red", "none": "bold magenta"}


class JudgePane(Vertical):
    def __init__(self, fleet: Fleet, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.fleet = fleet

    def compose(self) -> ComposeResult:
        yield AgentTile()
        yield Static(id="judge-log")
        yield Static(id="judge-verdicts")

    def judge_agent_name(self) -> str | None:
        for agent in self.fleet.agents.values():
            if agent.role == "judge":
                return agent.name
        return None

    def refresh_pane(self) -> None:
        tile = self.query_one(AgentTile)
        name = self.judge_agent_name()
        tile.show(self.fleet.agents[name] if name else None)
        if name:
            tile.update_state()
            tile.update_screen()
        log = self.fleet.tasks.judge_log[-12:]
        self.query_one("#judge-log", Static).update(
            Text("\n".join(log), style="grey70") if log else Text(""))
        self.query_one("#judge-log", Static).display = bool(log)
        self.query_one("#judge-verdicts", Static).update(self.verdicts_text())

    def verdicts_text(self) -> Text:
        text = Text("verdicts\n", style="bold")
        rows = []
        for task in self.fleet.store.tasks():
            for when, who, verdict, reasons in self.fleet.store.verdicts(int(str(task["id"]))):
                rows.append((when, str(task["agent"]), who, verdict, reasons))
        for when, agent, who, verdict, reasons in sorted(rows)[-8:]:
            text.append(time.strftime("%H:%M ", time.localtime(when)), style="grey50")
            text.append(f"{agent} ", style="bold")
            text.append(verdict, style=VERDICT_STYLE.get(verdict, ""))
            text.append(f" by {who}" + (f": {reasons}" if reasons else "") + "\n")
        if not rows:
            text.append("none yet: a review starts when a worker runs `swarm done`", "grey50")
        return text
