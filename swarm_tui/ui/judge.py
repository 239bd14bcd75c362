"""The judge pane: the judge agent's live screen (or the headless judge's runs), and the
latest verdicts with their reasons.

From `DOCK_MIN` columns it is docked beside the grid, and shows by itself once there is
judging to see (J hides or shows it). Below, docking it would squeeze the tiles under their
readable width, so it lies over the grid instead (the tiles keep their size, the status line
stays in sight), opened by J and closed by J or esc. Crossing `DOCK_MIN` switches between the
two: a pane open over the grid stays in sight docked; a docked one closes, so the tiles,
and the selected agent among them, are what a narrowed terminal shows."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from swarm_tui.protocol.client import FleetView
from swarm_tui.ui.tiles import AgentTile, TileGrid

VERDICT_STYLE = {"complete": "bold green", "incomplete": "bold red", "none": "bold magenta"}


DOCK_MIN = 160  # columns from which the pane is docked beside the grid
OVER_TITLE = "judge · J or esc closes"


class JudgePane(Vertical):
    BINDINGS = [Binding("escape", "close", "Close the judge pane", show=False)]

    def __init__(self, view: FleetView, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.view = view
        self.chosen: bool | None = None  # docked: shown or hidden with J (None: by itself)
        self.over = False  # on a narrow terminal: open over the grid

    @property
    def docked(self) -> bool:
        return not self.has_class("-over")

    def toggle(self, width: int) -> None:
        """J: docked, show or hide it; on a narrow terminal, open or close it over the grid."""
        if width >= DOCK_MIN:
            self.chosen = not self.display
        else:
            self.over = not self.over

    def place(self, width: int, sidebar: int, height: int) -> bool:
        """Dock it, or lay it over the grid (`sidebar`: the sidebar's width, 0 when hidden;
        `height`: the grid's, 0 when not measured yet), for a terminal `width` wide; True
        when it was shown or hidden (its agent's screen is wanted, or no longer)."""
        docked = width >= DOCK_MIN
        if docked and not self.docked and self.over:
            self.chosen = True  # it was open over the grid: it stays in sight
        if not docked and self.docked:
            self.over = False  # a narrowed terminal shows the tiles
        if docked:
            work = self.view.judge_name() is not None or bool(self.view.work.tasks)
            show = work if self.chosen is None else self.chosen
            self.styles.width = self.styles.height = None  # the stylesheet's
        else:
            show = self.over
            self.styles.width = max(1, width - sidebar)  # all of the grid's room
            self.styles.height = height or None  # the grid's: the status line in sight
        self.set_class(not docked, "-over")
        self.border_title = None if docked else OVER_TITLE
        self.can_focus = not docked
        changed = show != self.display
        self.display = show
        if show and not docked:
            self.focus()  # esc closes it
        if changed and show:
            self.refresh_pane()
        return changed

    def on_resize(self) -> None:
        """Its tile's room changed (shown, docked, laid over): the app sizes the judge's
        window again, as it does when the grid's size changes."""
        self.post_message(TileGrid.Resized())

    async def action_close(self) -> None:
        if not self.docked:
            await self.app.run_action("judge_pane")

    def compose(self) -> ComposeResult:
        yield AgentTile(self.view)
        yield Static(id="judge-log")
        yield Static(id="judge-verdicts")

    def judge_agent_name(self) -> str | None:
        return self.view.judge_name()

    def refresh_pane(self) -> None:
        tiles = self.query(AgentTile)
        if not tiles:  # its contents not composed yet, or gone (the app is closing)
            return
        tile = tiles.first()
        name = self.judge_agent_name()
        tile.show(name)
        log = self.view.work.judge_log[-12:]
        self.query_one("#judge-log", Static).update(
            Text("\n".join(log), style="grey70") if log else Text("")
        )
        self.query_one("#judge-log", Static).display = bool(log)
        self.query_one("#judge-verdicts", Static).update(self.verdicts_text())

    def verdicts_text(self) -> Text:
        text = Text("verdicts\n", style="bold")
        agent_of = {t.id: t.agent for t in self.view.work.tasks}
        rows = sorted(
            (v.time, agent_of[v.task], v.task, v.judge, v.verdict, v.reasons)
            for v in self.view.work.verdicts
            if v.task in agent_of
        )
        for when, agent, task, who, verdict, reasons in rows[-8:]:
            text.append(time.strftime("%H:%M ", time.localtime(when)), style="grey50")
            text.append(f"{agent} ", style="bold")
            text.append(f"#{task} ", style="grey62")  # two tasks' verdicts read apart
            text.append(verdict, style=VERDICT_STYLE.get(verdict, ""))
            text.append(f" by {who}" + (f": {reasons}" if reasons else "") + "\n")
        if not rows:
            text.append("none yet: a review starts when a worker runs `swarm done`", "grey50")
        return text
