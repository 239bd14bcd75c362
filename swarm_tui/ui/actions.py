"""What the view does to one agent or to the fleet through the engine: attach to an agent's
window, fresh start, a new task, a review now, its change in its worktree, save the fleet as
a layout (never over a file without asking); and which agents it shows: a filter, a jump to
a name."""

from __future__ import annotations

import os
import subprocess
import time
from functools import partial
from typing import Any

from textual import events
from textual.app import SuspendNotSupported

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import DiffView
from swarm_tui.ui.asking import answered_line, asking, shown_options
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.diff import DiffScreen
from swarm_tui.ui.diffparse import Anchor
from swarm_tui.ui.history import WHEEL_LINES, HistoryScreen
from swarm_tui.ui.judge import JudgePane
from swarm_tui.ui.link import EngineLink
from swarm_tui.ui.prompt import FocusScreen
from swarm_tui.ui.task_editor import TaskScreen
from swarm_tui.ui.tiles import AgentTile

# seconds after the selection moved by itself (its agent left the filter, or the fleet) in
# which y, n and 1-9 ask to be pressed again: a double-pressed key must not answer an agent
# the human has not looked at; and a refused key holds them back for HELD_KEY more seconds
# (a held key repeats, a triple press is quick: only a press after a pause answers)
MOVED_GRACE = 2.0
HELD_KEY = 1.0


class AgentActions(EngineLink):
    """The app's actions on the selected agent and on the fleet (SwarmApp provides the view,
    the selection and the page)."""

    view: FleetView
    order: list[str]
    filter: str
    zoomed: bool
    _judge: JudgePane

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._answering: set[str] = set()  # agents an answer is on its way to
        # the agent the selection moved to by itself, and until when keys do not answer it
        self._moved_here: tuple[str, float] | None = None
        self._moved_said = False
        # per agent, the comments on its change not sent yet (kept when its diff closes)
        self.reviews: dict[str, dict[Anchor, str]] = {}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """y, n and 1-9 answer only a dialog in sight: not while the judge pane lies over
        the grid (the screens over the view, history and help, are modal: the app's keys
        do not reach it under them)."""
        if action == "answer" and self._judge_over_grid():
            return False
        return super().check_action(action, parameters)

    def _judge_over_grid(self) -> bool:
        judge = getattr(self, "_judge", None)  # (asked before mount too, by the footer)
        return judge is not None and judge.display and not judge.docked

    def current_name(self) -> str | None:
        raise NotImplementedError

    def moved_by_itself(self, moved: bool) -> None:
        """The selection is on a new agent the human did not choose (`moved`), or the human
        chose where it is (not `moved`)."""
        name = self.current_name()
        self._moved_here = (name, time.monotonic() + MOVED_GRACE) if moved and name else None
        self._moved_said = False

    def select_name(self, name: str) -> None:
        raise NotImplementedError

    def _apply_order(self) -> None:
        raise NotImplementedError

    def _show_page(self) -> None:
        raise NotImplementedError

    async def action_page_up(self) -> None:
        """Zoomed: the agent's history, a page back from its screen; else the previous page."""
        name = self.current_name()
        if self.zoomed and name:
            self.push_screen(HistoryScreen(self.client, name))
        else:
            await self.run_action("page(-1)")

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """The wheel over the zoomed agent's tile scrolls back into its history."""
        tile, name = event.widget, self.current_name()
        if (
            self.zoomed
            and name
            and len(self.screen_stack) == 1
            and isinstance(tile, AgentTile)
            and tile.name_shown == name
        ):
            self.push_screen(HistoryScreen(self.client, name, back=WHEEL_LINES))

    def action_attach(self) -> None:
        name = self.current_name()
        if name:
            self._ask(
                lambda: self.client.attach_argv(name),
                partial(self._attach_window, name),
                what=f"attach to {name}",
                severity="warning",
            )

    def _attach_window(self, name: str, argv: list[str]) -> None:
        if not argv:
            self.notify(f"{name} has no tmux window to attach to", severity="warning")
            return
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}  # we may run inside tmux
        self.client.set_visible(set())  # no screens streamed to a view nobody sees
        try:
            with self.suspend():
                subprocess.run(argv, env=env)
        except SuspendNotSupported:
            self.notify(
                f"this terminal cannot hand over to {name}'s window: run `{' '.join(argv)}`",
                severity="warning",
                timeout=10,
            )
        self._show_page()

    def action_answer(self, choice: str) -> None:
        """Answer the selected agent's permission dialog: "yes", "no" or an option's number.
        The engine answers only the dialog this view showed (the same question, still
        open), with the CLI's own keys; anything else is refused in one line."""
        name = self.current_name()
        agent = self.view.agents.get(name) if name else None
        if name is None or agent is None:
            return
        if not asking(agent):
            self.notify(
                f"{name} is {agent.state}: no dialog to answer (y, n and 1-9 answer "
                "an agent that needs permission)",
                timeout=4,
            )
            return
        moved, now = self._moved_here, time.monotonic()
        if moved is not None and moved[0] == name and now < moved[1]:
            self._moved_here = (name, now + HELD_KEY)  # a repeat of this key: still held back
            if not self._moved_said:  # (said once, not once per repeat)
                self._moved_said = True
                self.notify(
                    f"the selection moved to {name} by itself (the agent before it left "
                    f"the list): look at its dialog, then press {choice[:1]} again",
                    severity="warning",
                    timeout=5,
                )
            return
        if name in self._answering:  # one answer at a time: the next key is for what follows
            self.notify(f"{name}: an answer is on its way; wait for it", timeout=3)
            return
        self._answering.add(name)
        question, options = agent.question, list(agent.options)
        seen = shown_options(agent, self.view.screens.get(name, []))  # as the tile shows them

        async def answer() -> dict[str, Any]:
            try:
                return await self.client.answer(name, choice, question, options)
            finally:
                self._answering.discard(name)

        self._ask(
            answer,
            partial(self._answered, name, seen),
            what=f"{name} not answered",
            severity="warning",
        )

    def _answered(self, name: str, seen: list[tuple[str, str]], reply: dict[str, object]) -> None:
        self.notify(answered_line(name, reply, seen), timeout=5)

    def action_fresh(self) -> None:
        """A fresh start ends the agent's conversation: asked first (`y`)."""
        name = self.current_name()
        if name:
            self.push_screen(
                ConfirmScreen(
                    f"Fresh start of {name}? It writes a handoff note, then its conversation is "
                    "cleared and it starts again from its focus, task and the note."
                ),
                lambda yes: self._fresh(name) if yes else None,
            )

    def _fresh(self, name: str) -> None:
        if name:
            self._ask(
                lambda: self.client.fresh(name),
                lambda _: self.notify(
                    f"{name}: fresh start begun (handoff note, new "
                    "conversation, re-inject focus and note)"
                ),
                what=f"fresh start of {name}",
            )

    def action_task(self) -> None:
        name = self.current_name()
        if name:
            self.push_screen(TaskScreen(name), lambda r: self._task_added(name, r))

    def _task_added(self, name: str, result: tuple[str, str] | None) -> None:
        if result is not None:
            spec, verify = result
            self._ask(
                lambda: self.client.add_task(name, spec, verify),
                lambda tid: self.notify(f"task #{tid} queued for {name}"),
                what=f"task for {name}",
            )

    def action_review(self) -> None:
        name = self.current_name()
        if name:
            self._ask(
                lambda: self.client.review(name),
                lambda _: self.notify(f"review of {name}'s task started"),
                severity="warning",
            )

    def action_diff(self) -> None:
        """The selected agent's change in its worktree, read now, in its own view."""
        name = self.current_name()
        agent = self.view.agents.get(name) if name else None
        if name is None or agent is None:
            return
        if agent.changes is None:
            self.notify(
                f"{name} has no worktree (worktree = true in the layout)",
                severity="warning",
                timeout=6,
            )
            return
        self._ask(
            lambda: self.client.diff(name),
            self._show_diff,
            what=f"changes of {name}",
            severity="warning",
        )

    def _show_diff(self, view: DiffView) -> None:
        if not any(isinstance(s, DiffScreen) for s in self.screen_stack):  # d pressed twice
            self.push_screen(DiffScreen(self.client, view, self.reviews.setdefault(view.agent, {})))

    def action_save(self) -> None:
        self.push_screen(
            FocusScreen("", self.view.fleet, title="Save the fleet as layout"), self._save
        )

    def _save(self, name: str | None) -> None:
        name = (name or "").strip()
        if name:
            self._ask(lambda: self.client.save_target(name), partial(self._save_checked, name))

    def _save_checked(self, name: str, target: tuple[str, bool]) -> None:
        """Never overwrite a layout file without asking."""
        path, exists = target
        if exists:
            self.push_screen(
                ConfirmScreen(f"{path} exists. Overwrite it?"),
                lambda yes: self._save_now(name, force=True) if yes else None,
            )
            return
        self._save_now(name, force=False)

    def _save_now(self, name: str, force: bool) -> None:
        self._ask(
            lambda: self.client.save(name, force=force),
            lambda path: self.notify(f"saved {path}: `swarm up {name}` brings it back"),
        )

    def action_filter(self) -> None:
        self.push_screen(
            FocusScreen(
                "",
                self.filter,
                title="Show agents whose name, role, "
                "state, host or focus has every word (empty: all)",
                placeholder="e.g. idle node03",
                verb="filter",
            ),
            self._filtered,
        )

    def _filtered(self, text: str | None) -> None:
        if text is not None:
            self.filter = " ".join(text.split())
            self._apply_order()

    def action_go(self) -> None:
        self.push_screen(
            FocusScreen(
                "", "", title="Go to agent", placeholder="its name, or the start of it", verb="go"
            ),
            self._go,
        )

    def _go(self, text: str | None) -> None:
        want = (text or "").strip().casefold()
        if not want:
            return
        names = list(self.view.agents)
        found = (
            next((n for n in names if n.casefold() == want), None)
            or next((n for n in names if n.casefold().startswith(want)), None)
            or next((n for n in names if want in n.casefold()), None)
        )
        if found is None:
            self.notify(f"no agent named like {text!r}", severity="warning")
            return
        if found not in self.order:  # filtered out: show everyone again
            self.filter = ""
            self._apply_order()
        self.select_name(found)
