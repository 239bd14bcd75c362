"""A stale draft is cleared wherever the cursor is, and a message starting with `!` reaches
the model instead of running as a shell command, in each real CLI (issue 9, item 2).

A human at the box (or the CLI itself, as Codex does after refusing a command) may leave the
cursor at the start of a multi-line draft. Keys that only delete backwards from the cursor then
clear nothing, and the message would be typed into the middle of the draft. Each test pastes a
two-line draft, moves the cursor to its first character (and checks, by tmux's cursor, that it
is there), sends a message through the fleet, and checks that the model got that message alone.
Claude Code and Copilot CLI run a message that starts with `!` as a shell command (bash mode,
`$ Shell`); gemini, opencode and aider (which escapes it itself) do not. Codex has its own
tests in test_codex_issue9.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.testing import async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import FakeLLM

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DRAFT = "stale first line\nstale second line"
MESSAGE = "the real message"
START = 60.0
TURN = 30.0


def _aider(sandbox: Any, fake: FakeLLM) -> tuple[Path, Callable[[], list[str]]]:
    from swarm_tui.testing.aider_offline import (
        FLAGS,
        MODEL,
        agent_env,
        bin_dir,
        make_repo,
        prepare_home,
        user_part,
    )

    exe = require_cli("aider")
    root = sandbox.files / "aider"
    env = agent_env(prepare_home(root / "home"), fake.base_url, bin_dir(exe, root / "bin"))
    layout = sandbox.layout(
        "drafts",
        {
            "name": "Ada",
            "cli": "aider",
            "model": MODEL,
            "args": list(FLAGS),
            "env": env,
            "cwd": str(make_repo(root / "repo")),
        },
    )
    return layout, lambda: [user_part(t) for t in fake.user_texts()]


def _gemini(sandbox: Any, fake: FakeLLM) -> tuple[Path, Callable[[], list[str]]]:
    from swarm_tui.testing.gemini_offline import (
        MODEL,
        agent_env,
        bin_dir,
        prepare_home,
        user_part,
    )

    exe = require_cli("gemini")
    root = sandbox.files / "gemini"
    env = agent_env(prepare_home(root / "home"), fake.base_url, bin_dir(exe, root / "bin"))
    (root / "repo").mkdir(parents=True)
    layout = sandbox.layout(
        "drafts",
        {"name": "Ada", "cli": "gemini", "model": MODEL, "env": env, "cwd": str(root / "repo")},
    )
    return layout, lambda: [user_part(t) for t in fake.user_texts()]


def _opencode(sandbox: Any, fake: FakeLLM) -> tuple[Path, Callable[[], list[str]]]:
    from swarm_tui.testing.opencode_offline import opencode_env

    exe = require_cli("opencode")
    project = sandbox.files / "project"
    project.mkdir()
    env = opencode_env(sandbox.files / "oc-home", fake.base_url)
    layout = sandbox.layout(
        "drafts",
        {"name": "Ada", "cli": "opencode", "command": str(exe), "cwd": str(project), "env": env},
    )
    return layout, fake.user_texts


STAMP = re.compile(r"^<current_datetime>[^<]*</current_datetime>\s*")


def _copilot(sandbox: Any, fake: FakeLLM) -> tuple[Path, Callable[[], list[str]]]:
    from swarm_tui.testing.copilot_offline import copilot_env

    exe = require_cli("copilot")
    project = sandbox.files / "project"
    project.mkdir()
    env = copilot_env(sandbox.files / "cp-home", fake.base_url, trusted=(project,))
    layout = sandbox.layout(
        "drafts",
        {"name": "Ada", "cli": "copilot", "command": str(exe), "cwd": str(project), "env": env},
    )
    return layout, lambda: [STAMP.sub("", t) for t in fake.user_texts()]


def _claude(sandbox: Any, fake: FakeLLM) -> tuple[Path, Callable[[], list[str]]]:
    from swarm_tui.testing.claude_offline import offline_env, seed_config

    exe = require_cli("claude")
    project = sandbox.files / "project"
    project.mkdir()
    config = seed_config(sandbox.files / "claude-config", [project])
    env = {
        **offline_env(config, fake.base_url),
        "PATH": f"{exe.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    layout = sandbox.layout(
        "drafts", {"name": "Ada", "cli": "claude", "cwd": str(project), "env": env}
    )
    return layout, fake.user_texts


CLIS = {
    "aider": _aider,
    "gemini": _gemini,
    "opencode": _opencode,
    "copilot": _copilot,
    "claude": _claude,
}


def _cursor(server: Any, pane: str) -> tuple[int, int, list[str]]:
    rows = server.run("capture-pane", "-p", "-t", pane).stdout.splitlines()
    at = server.run("display-message", "-p", "-t", pane, "#{cursor_x} #{cursor_y}").stdout
    x, y = (int(v) for v in at.split())
    return x, y, rows


def _on_line(server: Any, pane: str, text: str) -> bool:
    """Whether tmux's cursor in `pane` is on the screen line that shows `text`."""
    _, y, rows = _cursor(server, pane)
    return y < len(rows) and text in rows[y]


def _at_start(server: Any, pane: str, text: str) -> bool:
    """Whether tmux's cursor in `pane` sits on the first character of `text`."""
    x, y, rows = _cursor(server, pane)
    return y < len(rows) and rows[y][x:].startswith(text)


@pytest.mark.parametrize("cli", sorted(CLIS))
async def test_a_stale_draft_is_cleared_with_the_cursor_at_its_start(
    sandbox, start_fleet, fake, cli: str
) -> None:
    layout, sent = CLIS[cli](sandbox, fake)
    run = await start_fleet(layout)
    agent = run.fleet.agents["Ada"]
    await run.wait_states("idle", timeout=START)
    server = sandbox.tmux("drafts")
    pane = server.pane("Ada")
    server.run("set-buffer", "-b", "draft", "--", DRAFT)
    server.run("paste-buffer", "-p", "-r", "-d", "-b", "draft", "-t", pane)
    await async_wait_until(
        lambda: agent.tracker.reading.draft == DRAFT,
        TURN,
        "the pasted draft in the box",
        run.screens,
    )
    first = DRAFT.splitlines()[0]
    server.send_keys("Ada", "Up")  # the paste left it at the end of the second line
    await async_wait_until(
        lambda: _on_line(server, pane, first),
        TURN,
        "the cursor on the draft's first line",
        run.screens,
    )
    server.send_keys("Ada", "Home")
    await async_wait_until(
        lambda: _at_start(server, pane, first),
        TURN,
        "the cursor at the draft's first character",
        run.screens,
    )
    assert agent.tracker.reading.draft == DRAFT  # moving the cursor changed nothing else

    (message,) = run.fleet.send(["Ada"], MESSAGE)
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        TURN,
        "the message to be typed",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", (row.status, row.detail, run.screens())
    await async_wait_until(
        lambda: sent()[-1:] == [MESSAGE],
        TURN,
        "the model to get it",
        lambda: f"{sent()!r}\n{run.screens()}",
    )
    assert sent() == [MESSAGE]


@pytest.mark.parametrize("cli", sorted(CLIS))
async def test_a_message_starting_with_a_bang_reaches_the_model(
    sandbox, start_fleet, fake, cli: str
) -> None:
    layout, sent = CLIS[cli](sandbox, fake)
    run = await start_fleet(layout)
    await run.wait_states("idle", timeout=START)
    text = "!touch bang-ran.txt is what the old script did"
    (message,) = run.fleet.send(["Ada"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        TURN,
        "the message to be typed",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", (row.status, row.detail, run.screens())
    # Copilot trims whitespace before it looks for `!`: a zero-width space is what escapes it
    got = "\u200b" + text if cli == "copilot" else text
    await async_wait_until(
        lambda: sent()[-1:] == [got],
        TURN,
        "the model to get it",
        lambda: f"{sent()!r}\n{run.screens()}",
    )
    cwd = Path(run.fleet.agents["Ada"].spec.cwd)
    assert not (cwd / "bang-ran.txt").exists()
