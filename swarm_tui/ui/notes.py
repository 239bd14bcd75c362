"""What the sidebar says under an agent's name: the task it shows and its next reminder."""

from __future__ import annotations

from collections.abc import Iterable

from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.tasks import OPEN_TASK, PENDING, STOPPED
from swarm_tui.ui.durations import duration

Task = dict[str, object]
WITH_REASONS = ("incomplete", "stopped", "no-verdict")


def shown_task(tasks: Iterable[Task]) -> Task | None:
    """An agent's task for the sidebar (its tasks in queue order): the first open one once
    it is under way. Until then a task that stopped (after max rounds, or a prompt that never
    got through) stays in view: a stop must be seen, not replaced by the next task's
    `pending`, nor by nothing when no task follows."""
    tasks = list(tasks)
    current = next((t for t in tasks if t["status"] in OPEN_TASK), None)
    if current is not None and current["status"] != PENDING:
        return current
    before = tasks[: tasks.index(current)] if current is not None else tasks
    if before and before[-1]["status"] == STOPPED:
        return before[-1]
    return current


def task_note(task: Task) -> str:
    """`▸ in-progress r2`, `▸ incomplete r1: tests fail`, `■ stopped r5: …`."""
    status = str(task["status"])
    text = status
    if int(str(task["rounds"])):
        text += f" r{task['rounds']}"
    if task["reasons"] and status in WITH_REASONS:
        text += f": {task['reasons']}"
    return ("■ " if status == STOPPED else "▸ ") + text


def agent_notes(fleet: Fleet) -> dict[str, str]:
    """Per agent: the task it shows and its next reminder's countdown."""
    tasks: dict[str, list[Task]] = {}
    for row in fleet.store.tasks():  # one query for the fleet, in queue order per agent
        tasks.setdefault(str(row["agent"]), []).append(row)
    notes = {}
    for agent in fleet.agents.values():
        parts = []
        task = shown_task(tasks.get(agent.name, []))
        if task is not None:
            parts.append(task_note(task))
        due = fleet.reminders.countdown(agent)
        if due is not None:
            parts.append(f"⏰ {duration(due)}")
        if parts:
            notes[agent.name] = "  ".join(parts)
    return notes
