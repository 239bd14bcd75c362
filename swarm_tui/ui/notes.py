"""What the sidebar says under an agent's name: the task it shows and its next reminder."""

from __future__ import annotations

from collections.abc import Iterable

from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import (
    INCOMPLETE,
    NO_VERDICT,
    OPEN_TASK,
    PENDING,
    STOPPED,
    TaskView,
)
from swarm_tui.ui.durations import Clock

WITH_REASONS = (INCOMPLETE, STOPPED, NO_VERDICT)


def shown_task(tasks: Iterable[TaskView]) -> TaskView | None:
    """An agent's task for the sidebar (its tasks in queue order): the first open one once
    it is under way. Until then a task that stopped (after max rounds, or a prompt that never
    got through) stays in view: a stop must be seen, not replaced by the next task's
    `pending`, nor by nothing when no task follows."""
    tasks = list(tasks)
    current = next((t for t in tasks if t.status in OPEN_TASK), None)
    if current is not None and current.status != PENDING:
        return current
    before = tasks[: tasks.index(current)] if current is not None else tasks
    if before and before[-1].status == STOPPED:
        return before[-1]
    return current


def task_note(task: TaskView) -> str:
    """`▸ in-progress r2`, `▸ incomplete r1: tests fail`, `■ stopped r5: …`."""
    text = task.status
    if task.rounds:
        text += f" r{task.rounds}"
    if task.reasons and task.status in WITH_REASONS:
        text += f": {task.reasons}"
    return ("■ " if task.status == STOPPED else "▸ ") + text


def agent_notes(view: FleetView, clock: Clock) -> dict[str, str]:
    """Per agent: the task it shows and its next reminder's countdown (a glance: `⏰ 19m`,
    `⏰ 50s`, seconds in the last ten; `clock` learns when it next reads otherwise)."""
    notes = {}
    for name in view.agents:
        parts = []
        task = shown_task(view.tasks_of(name))
        if task is not None:
            parts.append(task_note(task))
        due = view.countdown(name)
        if due is not None:
            parts.append(f"⏰ {clock.left(due)}")
        if parts:
            notes[name] = "  ".join(parts)
    return notes
