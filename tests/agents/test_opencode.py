"""The real opencode (pinned in swarm_tui/testing/clis.py) under swarm, offline: a custom
OpenAI-compatible provider points it at a FakeLLM, all its files live in a private HOME
(swarm_tui/testing/opencode_offline.py).

Skipped, loudly, when opencode cannot be installed here; under CI=true that is a failure.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.agents.opencode import OpencodeAdapter
from swarm_tui.testing import async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import Reply
from swarm_tui.testing.opencode_offline import opencode_env

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def opencode_bin() -> Path:
    return require_cli("opencode")


@pytest.fixture
def opencode_layout(sandbox, fake, opencode_bin, tmp_path):
    """A layout with one opencode agent, Noether, in a project that holds notes.txt."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n", encoding="utf-8")
    env = opencode_env(tmp_path / "oc-home", fake.base_url)
    # `command` names the pinned executable: tmux gives new panes the client's PATH
    agent = {
        "name": "Noether",
        "cli": "opencode",
        "command": str(opencode_bin),
        "cwd": str(project),
        "env": env,
    }
    return sandbox.layout("ocfleet", agent)


async def _deliver(run, text: str) -> None:
    (message,) = run.fleet.send(["Noether"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status in ("delivered", "failed", "uncertain"),
        30,
        f"delivery of {text[:30]!r}",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", f"{row.status}: {row.detail}\n{run.screens()}"


async def test_opencode_starts_idle_and_gets_exactly_the_injected_texts(
    start_fleet, opencode_layout, fake
):
    run = await start_fleet(opencode_layout)
    agent = run.fleet.agents["Noether"]
    assert agent.state is AgentState.STARTING
    await run.wait_states("idle", timeout=40)
    assert agent.tracker.reading.draft == ""  # the placeholder is not a draft

    texts = [
        "fix the flaky test in tests/test_io.py",
        "first line of the plan\nsecond line: run it\n\tand an indented third",
        "/tmp/build is where the logs go; read them",  # `/` first: not a slash command
        "@notes.txt says hello, check it",  # `@` first: not a file picker pick
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
    assert fake.user_texts() == texts


async def test_opencode_is_working_while_the_reply_streams_then_idle(
    start_fleet, opencode_layout, fake
):
    run = await start_fleet(opencode_layout)
    agent = run.fleet.agents["Noether"]
    await run.wait_states("idle", timeout=40)
    fake.default = Reply("Let me think about this slowly and carefully, word by word.", 4.0)
    await _deliver(run, "take your time")
    await run.wait_states("working", timeout=10)
    # the screen itself says so (its busy footer), not just the typing
    await async_wait_until(
        lambda: agent.tracker.reading.state is AgentState.WORKING,
        10,
        "the busy footer",
        run.screens,
    )
    await run.wait_states("idle", timeout=30)
    assert fake.user_texts()[-1:] == ["take your time"], (
        f"{fake.user_texts()!r} {[r.path for r in fake.requests]}\n{run.screens()}"
    )


def test_headless_reads_stdin_and_prints_the_answer(opencode_bin, fake, tmp_path):
    fake.default = Reply("The spec is met.")
    env = {**os.environ, **opencode_env(tmp_path / "oc-home", fake.base_url)}
    argv = OpencodeAdapter().headless("fake/fake-model")
    argv[0] = str(opencode_bin)
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
    assert fake.user_texts() == ["Is the spec met?"]
