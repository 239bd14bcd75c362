"""Tasks and the judge loop on real tmux with mock agents: claims checked by someone else."""

from __future__ import annotations

import sys

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration

JUDGE = mock_agent("Jude", "--work", "0.3", role="judge")


def statuses(run, name):
    return [t.status for t in run.fleet.store.tasks(name)]


def verdicts(run, name):
    return [
        (who, verdict)
        for t in run.fleet.store.tasks(name)
        for _, who, verdict, _ in run.fleet.store.verdicts(t.id)
    ]


async def test_verify_fails_then_judge_passes_then_next_task(sandbox, start_fleet, tmp_path):
    marker = tmp_path / "built.txt"
    worker = mock_agent(
        "Wes",
        "--claims-done",
        tasks=[
            {"spec": "Build the thing", "verify": f"test -f {marker}", "review_on_idle": False},
            {"spec": "Document the thing", "review_on_idle": False},
        ],
    )
    run = await start_fleet(sandbox.layout("judge1", worker, JUDGE))
    await async_wait_until(
        lambda: any(t.startswith("Your task:\nBuild the thing") for t in sandbox.received("Wes")),
        15,
        "the first task to be injected",
        run.screens,
    )
    assert run.fleet.agents["Wes"].focus == "Build the thing"  # focus follows the task
    # the worker claims done (swarm done from its pane); verify fails: no model is asked
    await async_wait_until(
        lambda: ("verify", "incomplete") in verdicts(run, "Wes"),
        20,
        "the verify verdict",
        run.screens,
    )
    assert sandbox.received("Jude") == []
    await async_wait_until(
        lambda: any(t.startswith("Your task is not done yet") for t in sandbox.received("Wes")),
        15,
        "the re-prompt with the reasons",
        run.screens,
    )
    reprompt = next(t for t in sandbox.received("Wes") if t.startswith("Your task is not"))
    assert "the verify command failed: exit 1" in reprompt
    marker.write_text("done")  # the work is really there now
    await async_wait_until(
        lambda: statuses(run, "Wes")[0] == "complete",
        30,
        "the judge to pass the first task",
        run.screens,
    )
    assert ("Jude", "complete") in verdicts(run, "Wes")
    assert any("VERDICT <review number>: COMPLETE" in t for t in sandbox.received("Jude"))
    await async_wait_until(
        lambda: any(
            t.startswith("Your task:\nDocument the thing") for t in sandbox.received("Wes")
        ),
        15,
        "the next task",
        run.screens,
    )


async def test_worker_that_gives_up_is_sent_back(sandbox, start_fleet):
    worker = mock_agent(
        "Gia",
        "--claims-done",
        "--give-up-first",
        "1",
        tasks=[{"spec": "Port the parser", "review_on_idle": False}],
    )
    run = await start_fleet(sandbox.layout("judge2", worker, JUDGE))
    await async_wait_until(
        lambda: ("Jude", "incomplete") in verdicts(run, "Gia"),
        30,
        "an incomplete verdict",
        run.screens,
    )
    task = run.fleet.store.tasks("Gia")[0]
    assert "stopped early" in task.reasons
    await async_wait_until(
        lambda: statuses(run, "Gia") == ["complete"], 30, "the second round to pass", run.screens
    )
    assert verdicts(run, "Gia") == [("Jude", "incomplete"), ("Jude", "complete")]
    listing = await sandbox.aswarm("tasks")
    assert "complete" in listing.stdout and "Jude: incomplete" in listing.stdout


async def test_headless_judge_command_and_a_judge_without_verdict(sandbox, start_fleet, tmp_path):
    good = tmp_path / "good_judge.py"
    good.write_text(
        "import sys\nprompt = sys.stdin.read()\nassert 'Count to three' in prompt\n"
        "print('I checked.')\nprint('VERDICT: COMPLETE')\n"
    )
    vague = tmp_path / "vague_judge.py"
    vague.write_text(
        "import sys\nsys.stdin.read()\nprint('Looks fine to me, VERDICT: COMPLETE probably')\n"
    )
    workers = [
        mock_agent(
            "Hal",
            "--claims-done",
            tasks=[
                {
                    "spec": "Count to three",
                    "review_on_idle": False,
                    "judge_command": f"{sys.executable} {good}",
                }
            ],
        ),
        mock_agent(
            "Ivy",
            "--claims-done",
            tasks=[
                {
                    "spec": "Count to four",
                    "review_on_idle": False,
                    "judge_command": f"{sys.executable} {vague}",
                }
            ],
        ),
    ]
    run = await start_fleet(sandbox.layout("judge3", *workers))
    await async_wait_until(
        lambda: statuses(run, "Hal") == ["complete"],
        30,
        "the headless judge's verdict",
        run.screens,
    )
    await async_wait_until(
        lambda: statuses(run, "Ivy") == ["no-verdict"],
        30,
        "the vague judge to be reported",
        run.screens,
    )
    (row,) = run.fleet.store.tasks("Ivy")
    assert row.status != "complete"  # never taken as complete
    assert [verdict for _, verdict in verdicts(run, "Ivy")] == ["none"]
    assert any("$ " in line for line in run.fleet.tasks.judge_log)  # the pane shows the run


async def test_same_family_judge_is_warned(sandbox, start_fleet):
    worker = mock_agent("Kit", family="anthropic", tasks=[{"spec": "x", "judge": "Lee"}])
    judge = mock_agent("Lee", role="judge", family="anthropic")
    run = await start_fleet(sandbox.layout("judge4", worker, judge))
    warnings = run.fleet.tasks.warn_same_family()
    assert warnings == [
        "judge Lee reviews Kit and both are anthropic models: their mistakes "
        "correlate; prefer a judge of another family"
    ]
