"""The real Claude Code off PATH, named by the layout's `command` (issue 9, item 9): the agent
starts and reaches idle, and `swarm doctor` finds the executable the layout names."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.testing.claude_offline import offline_env, seed_config
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import FakeLLM

pytestmark = pytest.mark.integration

START = 45.0  # seconds for Claude Code to start (first run of a large binary on a cold disk)
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"  # a PATH without the pinned CLIs


@pytest.fixture(scope="module")
def claude() -> Path:
    path = require_cli("claude")
    assert shutil.which("claude", path=BARE_PATH) is None, "claude must be off this PATH"
    return path


def _layout(sandbox: Any, fake: FakeLLM, command: str, path: str = BARE_PATH) -> Path:
    proj = sandbox.files / "proj"
    proj.mkdir(exist_ok=True)
    config = seed_config(sandbox.files / "claude-config", [proj])
    env = {**offline_env(config, fake.base_url), "PATH": path}
    return sandbox.layout(
        "cc", {"name": "Ada", "cli": "claude", "cwd": str(proj), "env": env, "command": command}
    )


async def test_claude_off_path_starts_from_the_layouts_command(
    sandbox, start_fleet, claude, fake
) -> None:
    run = await start_fleet(_layout(sandbox, fake, str(claude)))
    agent = run.fleet.agents["Ada"]
    assert agent.state is AgentState.STARTING
    await run.wait_states("idle", timeout=START)
    assert agent.tracker.reading.state is AgentState.IDLE  # the real input box, not quiet


def test_doctor_finds_the_executable_the_layout_names(sandbox, claude, fake) -> None:
    assert shutil.which("tmux", path=BARE_PATH), "doctor needs tmux on this PATH"
    found = sandbox.swarm(
        "doctor", str(_layout(sandbox, fake, str(claude))), env={"PATH": BARE_PATH}
    )
    assert found.returncode == 0, found.stdout + found.stderr
    assert f" {claude};" in found.stdout and "MISSING" not in found.stdout, found.stdout

    missing = sandbox.swarm(
        "doctor", str(_layout(sandbox, fake, str(claude) + "-not-here")), env={"PATH": BARE_PATH}
    )
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert f"{claude}-not-here MISSING" in missing.stdout, missing.stdout


def test_doctor_looks_on_the_path_the_layout_gives_the_agent(sandbox, claude, fake) -> None:
    on_agents_path = _layout(sandbox, fake, "", path=f"{claude.parent}:{BARE_PATH}")
    found = sandbox.swarm("doctor", str(on_agents_path), env={"PATH": BARE_PATH})
    assert found.returncode == 0, found.stdout + found.stderr
    assert " claude;" in found.stdout and "MISSING" not in found.stdout, found.stdout

    off_path = sandbox.swarm("doctor", str(_layout(sandbox, fake, "")), env={"PATH": BARE_PATH})
    assert off_path.returncode == 1 and "claude MISSING" in off_path.stdout, off_path.stdout
