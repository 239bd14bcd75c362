"""The real GitHub Copilot CLI (pinned in swarm_tui/testing/clis.py) under swarm, offline: its
documented offline mode with a "bring your own key" provider points it at a FakeLLM, with no
GitHub login (swarm_tui/testing/copilot_offline.py).

Skipped, loudly, when Copilot cannot be installed here; under CI=true that is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.agents.copilot import CopilotAdapter
from swarm_tui.testing import async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.copilot_offline import copilot_env
from swarm_tui.testing.fake_llm import FakeLLM, Reply

pytestmark = pytest.mark.integration

# Copilot prefixes each user message with the time; FakeLLM.user_texts() keeps it
STAMP = re.compile(r"^<current_datetime>[^<]*</current_datetime>\s*")


@pytest.fixture(scope="module")
def copilot_bin() -> Path:
    return require_cli("copilot")


def typed(fake: FakeLLM) -> list[str]:
    return [STAMP.sub("", t) for t in fake.user_texts()]


@pytest.fixture
def copilot_layout(sandbox, fake, copilot_bin, tmp_path):
    def make(trusted: bool = True) -> Path:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        (project / "notes.txt").write_text("hello\n", encoding="utf-8")
        env = copilot_env(
            tmp_path / "cp-home", fake.base_url, trusted=(project,) if trusted else ()
        )
        agent = {
            "name": "Turing",
            "cli": "copilot",
            "command": str(copilot_bin),
            "cwd": str(project),
            "env": env,
        }
        return sandbox.layout("cpfleet", agent)

    return make


async def _deliver(run, text: str) -> None:
    (message,) = run.fleet.send(["Turing"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status in ("delivered", "failed", "uncertain"),
        30,
        f"delivery of {text[:30]!r}",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", f"{row.status}: {row.detail}\n{run.screens()}"


async def test_copilot_starts_idle_and_gets_exactly_the_injected_texts(
    start_fleet, copilot_layout, fake
):
    run = await start_fleet(copilot_layout())
    agent = run.fleet.agents["Turing"]
    assert agent.state is AgentState.STARTING
    await run.wait_states("idle", timeout=40)
    texts = [
        "fix the flaky test in tests/test_io.py",
        "first line of the plan\nsecond line: run it\n\tand an indented third",
        "/tmp/build is where the logs go; read them",
        "@notes.txt says hello, check it",
    ]
    for i, text in enumerate(texts):
        await _deliver(run, text)
        await async_wait_until(
            lambda n=i + 1: len(fake.user_texts()) >= n,
            30,
            f"the model to receive message {i + 1}",
            run.screens,
        )
        await run.wait_states("idle", timeout=30)
    got = typed(fake)
    # Copilot's own editor expands a tab to four spaces, and appends a list of the files an
    # `@path` names; everything swarm typed arrived, in order, exactly
    assert got[:3] == [texts[0], texts[1].replace("\t", "    "), texts[2]]
    assert got[3].startswith(texts[3] + "\n")
    assert "<tagged_files>" in got[3] and "notes.txt" in got[3]
    assert len(got) == len(texts)


async def test_copilot_is_working_while_the_reply_streams_then_idle(
    start_fleet, copilot_layout, fake
):
    run = await start_fleet(copilot_layout())
    agent = run.fleet.agents["Turing"]
    await run.wait_states("idle", timeout=40)
    fake.default = Reply("Let me think about this slowly and carefully, word by word.", 4.0)
    await _deliver(run, "take your time")
    await async_wait_until(
        lambda: agent.tracker.reading.state is AgentState.WORKING,
        10,
        "the Working status line",
        run.screens,
    )
    assert agent.state is AgentState.WORKING
    await run.wait_states("idle", timeout=30)
    assert typed(fake) == ["take your time"]


async def test_untrusted_folder_asks_first_and_nothing_is_typed_into_the_dialog(
    start_fleet, copilot_layout, fake
):
    run = await start_fleet(copilot_layout(trusted=False))
    agent = run.fleet.agents["Turing"]
    await run.wait_states("needs-permission", timeout=40)
    assert agent.tracker.reading.question == "trust the files in this folder"
    assert not agent.tracker.ready


def test_headless_reads_stdin_and_prints_the_answer(copilot_bin, fake, tmp_path):
    fake.default = Reply("The spec is met.")
    env = {**os.environ, **copilot_env(tmp_path / "cp-home", fake.base_url)}
    argv = CopilotAdapter().headless("")
    argv[0] = str(copilot_bin)
    out = subprocess.run(
        argv,
        input="Is the spec met?",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "The spec is met."
    assert typed(fake) == ["Is the spec met?"]
