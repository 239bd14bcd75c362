"""The real Codex CLI as an interactive judge (`role = "judge"`), offline against a fake
server. Codex shows the whole pasted review prompt in its transcript, template lines
included: a verdict must come from its answer to this review, never from the prompt's text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.codex_offline import codex_home

pytestmark = pytest.mark.integration


def _layout(sandbox, fake, codex_bin, tmp_path, fleet: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    env = codex_home(tmp_path / "codex-home", fake.base_url, [project])
    env["PATH"] = f"{codex_bin.parent}:{os.environ['PATH']}"
    judge = {"name": "Jude", "cli": "codex", "role": "judge", "cwd": str(project), "env": env}
    worker = mock_agent(
        "Wes", "--claims-done", tasks=[{"spec": "Port the parser", "review_on_idle": False}]
    )
    return sandbox.layout(fleet, worker, judge)


def _verdicts(run) -> list[str]:
    (task,) = run.store.tasks("Wes")
    return [v for _, _, v, _ in run.store.verdicts(task.id)]


async def test_an_echoed_prompt_and_an_ack_are_never_complete(
    sandbox, start_fleet, fake, codex_bin, tmp_path
):
    """The judge echoes the prompt (with `VERDICT … COMPLETE` template lines) and answers
    "ACK": that is no verdict, asked twice, and the task is never marked complete."""
    asked: list[str] = []

    def ack(text: str) -> str:
        asked.append(text)
        return f"ACK: received {len(text)} chars."

    fake.respond = ack
    run = await start_fleet(_layout(sandbox, fake, codex_bin, tmp_path, "judgeack"))
    await async_wait_until(
        lambda: "none" in _verdicts(run),
        120,
        "the judge's ACK to be taken as no verdict",
        run.screens,
    )
    (task,) = run.store.tasks("Wes")
    assert task.status == "no-verdict", task
    assert "complete" not in _verdicts(run)
    assert any("VERDICT <review number>: COMPLETE" in t for t in asked)  # it saw the template
    judge_screen = "\n".join(run.fleet.agents["Jude"].plain_screen())
    assert "ACK: received" in judge_screen


async def test_the_judges_own_answer_with_the_review_number_counts(
    sandbox, start_fleet, fake, codex_bin, tmp_path
):
    def judge(text: str) -> str:
        found = re.search(r"Review number: (R-[0-9a-f]+)", text)
        if not found:
            return "Noted."
        return f"I read the work.\n\nVERDICT {found.group(1)}: INCOMPLETE: no tests were added"

    fake.respond = judge
    run = await start_fleet(_layout(sandbox, fake, codex_bin, tmp_path, "judgeok"))
    await async_wait_until(
        lambda: "incomplete" in _verdicts(run), 120, "the judge's verdict", run.screens
    )
    (task,) = run.store.tasks("Wes")
    assert "no tests were added" in task.reasons
    await async_wait_until(
        lambda: any("no tests were added" in t for t in sandbox.received("Wes")),
        30,
        "the re-prompt with the judge's reasons",
        run.screens,
    )
