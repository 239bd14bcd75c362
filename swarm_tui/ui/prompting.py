"""The prompt and the focus label: which agents a message goes to (the selection or the
marked, all, a role), skills and their parameters, and the engine's answer said in a line."""

from __future__ import annotations

from functools import partial

from swarm_tui.protocol.client import Refused, Unreachable
from swarm_tui.protocol.models import MessageView, SkillView
from swarm_tui.ui.actions import AgentActions
from swarm_tui.ui.prompt import FocusScreen, PromptScreen, Target, skill_request


class PromptActions(AgentActions):
    """The app's prompt and focus actions (SwarmApp provides the selection and drawing)."""

    marked: set[str]
    selected: int
    skills: dict[str, SkillView]

    def _draw_states(self) -> None:
        raise NotImplementedError

    def _draw_sidebar(self) -> None:
        raise NotImplementedError

    def targets(self) -> list[Target]:
        chosen = [n for n in self.order if n in self.marked] or [self.current_name() or ""]
        out = [
            Target(", ".join(chosen), tuple(chosen)),
            Target(f"all agents ({len(self.view.agents)})", tuple(self.view.agents)),
        ]
        agents = self.view.agents.values()
        for role in sorted({a.role for a in agents}):
            names = tuple(a.name for a in agents if a.role == role)
            out.append(Target(f"role {role} ({len(names)})", names, role))
        return out

    def action_prompt(self, which: str = "selection", text: str = "") -> None:
        if not self.order:
            return
        targets = self.targets()
        start = {"selection": 0, "all": 1}.get(which, 0)
        if which == "role":
            agent = self.view.agents.get(self.order[self.selected])
            start = next(
                (
                    i
                    for i, t in enumerate(targets)
                    if i >= 2 and agent is not None and t.role == agent.role
                ),
                0,
            )
        self.push_screen(
            PromptScreen(targets, min(start, len(targets) - 1), text, self.skills), self._prompted
        )
        self.run_worker(self._fetch_skills(), group="skills", exclusive=True)

    async def _fetch_skills(self) -> None:
        """The engine's skills (its files, read now: an edited skill is live at once)."""
        try:
            self.skills = await self.client.skills()
        except (Refused, Unreachable):
            return  # the last list stays; the engine's own line says why elsewhere
        for screen in self.screen_stack:
            if isinstance(screen, PromptScreen):
                screen.skills_changed(self.skills)

    def _prompted(self, result: tuple[Target, str] | None) -> None:
        if result is None:
            return
        target, text = result
        try:
            skill, params, rest = skill_request(text, self.skills)
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        names = list(target.names)
        self._ask(
            lambda: self.client.send(names, rest, skill=skill, params=params),
            partial(self._sent, target),
        )

    def _sent(self, target: Target, sent: list[MessageView]) -> None:
        self.notify(
            f"queued for {target.label}"
            if len(sent) > 1
            else f"queued for {sent[0].recipient if sent else 'nobody'}"
        )
        self.marked.clear()
        self._draw_states()
        self._draw_sidebar()

    def action_focus_label(self) -> None:
        name = self.current_name()
        agent = self.view.agents.get(name) if name else None
        if name and agent is not None:
            self.push_screen(
                FocusScreen(name, agent.focus), lambda label: self._focused(name, label)
            )

    def _focused(self, name: str, label: str | None) -> None:
        if label is not None:
            self._ask(lambda: self.client.set_focus(name, label), what=f"focus of {name}")
