"""The judge pane, docked beside the grid: the judge agent's live screen (or the headless
judge's runs), and the latest verdicts with their reasons."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from swarm_tui.protocol.client import FleetView
from swarm_tui.ui.tiles import AgentTile

VERDICT_STYLE = {"complete": "bold green", "incomplete": "bold red", "none": "bold magenta"}


class JudgePane(Vertical):
    def __init__(self, view: FleetView, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.view = view

    def compose(self) -> ComposeResult:
        yield AgentTile(self.view)
        yield Static(id="judge-log")
        yield Static(id="judge-verdicts")

    def judge_agent_name(self) -> str | None:
        return self.view.judge_name()

    def refresh_pane(self) -> None:
        tile = self.query_one(AgentTile)
        name = self.judge_agent_name()
        tile.show(name)
        log = self.view.work.judge_log[-12:]
        self.query_one("#judge-log", Static).update(
            Text("\n".join(log), style="grey70") if log else Text(""))
        self.query_one("#judge-log", Static).display = bool(log)
        self.query_one("#judge-verdicts", Static).update(self.verdicts_text())

    def verdicts_text(self) -> Text:
        text = Text("verdicts\n", style="bold")
        agent_of = {t.id: t.agent for t in self.view.work.tasks}
        rows = sorted((v.time, agent_of[v.task], v.judge, v.verdict, v.reasons)
                      for v in self.view.work.verdicts if v.task in agent_of)
        for when, agent, who, verdict, reasons in rows[-8:]:
            text.append(time.strftime("%H:%M ", time.localtime(when)), style="grey50")
            text.append(f"{agent} ", style="bold")
            text.append(verdict, style=VERDICT_STYLE.get(verdict, ""))
            text.append(f" by {who}" + (f": {reasons}" if reasons else "") + "\n")
        if not rows:
            text.append("none yet: a review starts when a worker runs `swarm done`", "grey50")
        return text
