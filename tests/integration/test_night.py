"""A fleet left alone: tasks start at delivery, the watchdog fires in every idle stretch,
stopped tasks hand over to the next, and messages whose reason is gone are not typed.
Real tmux, mock agents, the engine in-process."""

from __future__ import annotations

import pytest

from swarm_tui.errors import SwarmError
from swarm_tui.fleet import reminders as reminders_module
from swarm_tui.fleet.store import NewReminder, NewTask, ReminderKind
from swarm_tui.fleet.tasks import TaskBoard
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration

JUDGE = mock_agent("Jude", "--work", "0.3", role="judge")


def _status(run, agent: str, index: int = 0) -> str:
    return run.store.tasks(agent)[index].status


def _typed(sandbox, agent: str, start: str) -> list[str]:
    return [t for t in sandbox.received(agent) if t.startswith(start)]


async def test_a_task_is_in_progress_only_once_its_prompt_is_delivered(sandbox, start_fleet):
    """The worker sits on a permission prompt: its new task stays pending (its prompt
    queued), no review and no claim of done is taken, until the prompt is typed."""
    worker = mock_agent("Wes", "--work", "2", "--permission-rate", "1")
    run = await start_fleet(sandbox.layout("pending", worker, JUDGE))
    await run.wait_states("idle", timeout=15)
    run.fleet.send(["Wes"], "start the build")
    await run.wait_states("needs-permission", ["Wes"], timeout=15)
    tid = run.fleet.tasks.add("Wes", NewTask(spec="Port the parser"), "test")
    task = run.store.task(tid)
    assert task is not None and task.status == "pending" and task.prompt
    prompt = run.store.message(task.prompt)
    assert prompt is not None and prompt.status == "queued"
    with pytest.raises(SwarmError, match="has not been delivered"):
        run.fleet.tasks.review("Wes")
    with pytest.raises(SwarmError, match="has not been delivered"):
        run.fleet.tasks.done("Wes", "all done")
    assert run.store.verdicts(tid) == []
    run.sandbox.tmux("pending").send_keys("Wes", "y")  # the human answers the prompt
    await async_wait_until(
        lambda: _status(run, "Wes") == "in-progress",
        30,
        "the task to start once its prompt is delivered",
        run.screens,
    )
    assert _typed(sandbox, "Wes", "Your task:\nPort the parser")
    row = run.store.task(tid)
    assert row is not None and row.started >= prompt.created


async def test_the_stall_watchdog_fires_in_every_idle_stretch(sandbox, start_fleet, monkeypatch):
    """A worker that stalls after every turn gets a reminder in each idle stretch, not
    once per run (a delivery makes it busy through the one state-change path)."""
    monkeypatch.setattr(reminders_module, "TICK", 0.5)
    worker = mock_agent("Sal")
    layout = sandbox.layout(
        "stall",
        worker,
        reminders=[{"to": "Sal", "idle": "10s", "text": "Are you stuck? Keep going."}],
    )
    run = await start_fleet(layout)

    def delivered() -> list:
        return [
            m
            for m in run.store.messages()
            if m.sender.startswith("reminder:") and m.status == "delivered"
        ]

    await async_wait_until(
        lambda: len(delivered()) >= 3,
        60,
        "three stall reminders in three idle stretches",
        run.screens,
    )
    assert len(_typed(sandbox, "Sal", "Are you stuck")) >= 3
    rows = delivered()
    gaps = [b.created - a.created for a, b in zip(rows, rows[1:], strict=False)][:2]
    assert all(g >= 10 for g in gaps), gaps  # once per stretch, each after 10 s idle


async def test_a_task_stopped_by_an_idle_review_starts_the_next(sandbox, start_fleet, monkeypatch):
    monkeypatch.setattr(TaskBoard, "review_settle", 1.0)
    worker = mock_agent(
        "Gia",
        "--give-up-rate",
        "1",
        tasks=[
            {"spec": "Port the parser", "max_rounds": 1},
            {"spec": "Write the docs", "review_on_idle": False},
        ],
    )
    run = await start_fleet(sandbox.layout("stopnext", worker, JUDGE))
    await async_wait_until(
        lambda: _status(run, "Gia") == "stopped",
        45,
        "the first task to stop after its one round",
        run.screens,
    )
    await async_wait_until(
        lambda: bool(_typed(sandbox, "Gia", "Your task:\nWrite the docs")),
        30,
        "the second task's prompt to be typed",
        run.screens,
    )
    await async_wait_until(
        lambda: _status(run, "Gia", 1) == "in-progress",
        10,
        "the second task to be in progress once delivered",
        run.screens,
    )


async def test_an_idle_review_waits_for_a_settled_idle_and_new_work(
    sandbox, start_fleet, monkeypatch
):
    """A worker whose turns end fast must not burn its rounds in seconds: a review on idle
    waits `review_settle`, and an unchanged screen is not reviewed again."""
    monkeypatch.setattr(TaskBoard, "review_settle", 4.0)
    worker = mock_agent(
        "Ivo", "--give-up-rate", "1", tasks=[{"spec": "Port the parser", "max_rounds": 5}]
    )
    run = await start_fleet(sandbox.layout("settle", worker, JUDGE))
    await async_wait_until(lambda: _status(run, "Ivo") != "pending", 20, "the task to start")
    started = run.store.tasks("Ivo")[0].started
    await async_wait_until(
        lambda: run.store.verdicts(run.store.tasks("Ivo")[0].id),
        30,
        "the first idle review",
        run.screens,
    )
    first = run.store.verdicts(run.store.tasks("Ivo")[0].id)[0][0]
    assert first - started >= 4.0  # not the moment the turn ended
    await async_wait_until(
        lambda: _status(run, "Ivo") in ("stopped", "incomplete"), 30, "the verdict to be recorded"
    )
    (task,) = run.store.tasks("Ivo")
    assert task.rounds <= 2  # 10 s in: nowhere near 5 rounds


async def test_messages_whose_reason_is_gone_are_not_typed(sandbox, start_fleet):
    """A re-prompt queued behind other work, for a task that is complete by its turn, and
    a stall reminder queued before the agent went back to work: both cancelled, recorded."""
    worker = mock_agent("Ola", "--work", "2")
    run = await start_fleet(sandbox.layout("stale", worker))
    await run.wait_states("idle", timeout=15)
    tid = run.store.add_task("Ola", NewTask(spec="Port the parser", review_on_idle=False), "test")
    run.store.update_task(tid, status="in-progress")
    later = run.store.add_task("Ola", NewTask(spec="Then the docs", review_on_idle=False), "test")
    run.store.update_task(later, status="in-progress")  # an open task: reminders still apply
    run.fleet.send(["Ola"], "first, a long job")
    await run.wait_states("working", ["Ola"], timeout=10)
    (reprompt,) = run.fleet.send(["Ola"], "Your task is not done yet: add tests", "swarm", tid)
    run.store.update_task(tid, status="complete")
    (stall,) = run.fleet.send(["Ola"], "Are you stuck?", sender="reminder:1")
    rid = run.store.upsert_reminder(
        "test", NewReminder(target="Ola", kind=ReminderKind.IDLE, period=10.0)
    )
    assert rid == run.store.reminders()[0].id == 1
    await async_wait_until(
        lambda: all(run.store.message(m.id).status == "cancelled" for m in (reprompt, stall)),
        30,
        "both stale messages to be cancelled",
        run.screens,
    )
    assert "already complete" in run.store.message(reprompt.id).detail
    assert "went back to work" in run.store.message(stall.id).detail
    assert not _typed(sandbox, "Ola", "Your task is not done")
    assert not _typed(sandbox, "Ola", "Are you stuck")
