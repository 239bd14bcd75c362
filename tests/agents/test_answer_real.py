"""Answering the real CLIs' permission dialogs from swarm, offline against FakeLLM: each CLI
asks to run `touch` (a tool call FakeLLM scripts), the answer goes through the engine's
socket as a view sends it, and the file on disk says what the CLI made of it — there for
yes, never there for no. The keys each CLI takes are its adapter's `option_keys`.

Skipped, loudly, when a CLI cannot be installed here; under CI=true that is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.protocol.client import FleetClient
from swarm_tui.testing import async_holds, async_wait_until
from swarm_tui.testing.aider_offline import FLAGS, make_repo
from swarm_tui.testing.aider_offline import MODEL as AIDER_MODEL
from swarm_tui.testing.aider_offline import agent_env as aider_env
from swarm_tui.testing.aider_offline import bin_dir as aider_bin
from swarm_tui.testing.aider_offline import prepare_home as aider_home
from swarm_tui.testing.claude_offline import offline_env, seed_config
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.copilot_offline import copilot_env
from swarm_tui.testing.fake_llm import FakeLLM, Reply
from swarm_tui.testing.gemini_offline import MODEL as GEMINI_MODEL
from swarm_tui.testing.gemini_offline import agent_env as gemini_env
from swarm_tui.testing.gemini_offline import bin_dir as gemini_bin
from swarm_tui.testing.gemini_offline import prepare_home as gemini_home
from swarm_tui.testing.opencode_offline import opencode_env

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

START = 60.0  # seconds for a CLI to start (a cold disk, a loaded machine)
TURN = 30.0  # seconds for a turn against FakeLLM
MARKER = "made-by-agent.txt"


async def ask(run: Any, name: str, text: str) -> tuple[Any, str]:
    """Send `text` (FakeLLM answers with a tool call) and wait for the dialog and its
    options; returns the agent and the question as a view shows it."""
    agent = run.fleet.agents[name]
    (message,) = run.fleet.send([name], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered",
        TURN,
        f"delivery of {text!r}",
        run.screens,
    )
    await run.wait_states("needs-permission", [name], timeout=TURN)
    await async_wait_until(lambda: agent.summary()["options"], 10, f"{name}'s options", run.screens)
    return agent, str(agent.summary()["question"])


async def answer(sandbox: Any, run: Any, name: str, choice: str) -> dict[str, Any]:
    """Answer `name`'s dialog through the socket, as the view does."""
    agent = run.fleet.agents[name]
    client = FleetClient(sandbox.socket_path(run.fleet.name))
    reply = await client.answer(name, choice, str(agent.summary()["question"]))
    assert reply["state"] != "needs-permission" or reply["asks"], reply
    return reply


async def made(run: Any, project: Path) -> None:
    await async_wait_until(
        lambda: (project / MARKER).exists(), TURN, f"{MARKER} to be made after yes", run.screens
    )


async def not_made(run: Any, name: str, project: Path) -> None:
    agent = run.fleet.agents[name]
    await async_wait_until(
        lambda: agent.state.value != "needs-permission",
        TURN,
        "the dialog to go after no",
        run.screens,
    )
    await async_holds(lambda: not (project / MARKER).exists(), 2.0, f"no {MARKER}", run.screens)


def touch(tool: str, **extra: Any) -> Reply:
    return Reply(tool=(tool, {"command": f"touch {MARKER}", **extra}))


# ---------------------------------------------------------------------- Claude Code
async def claude_fleet(
    sandbox: Any, start_fleet: Any, fake: FakeLLM, **seed: Any
) -> tuple[Any, Path]:
    claude = require_cli("claude")
    proj = sandbox.files / "proj"
    proj.mkdir(exist_ok=True)
    config = seed_config(sandbox.files / "claude-config", [proj], **seed)
    env = {
        **offline_env(config, fake.base_url),
        "PATH": f"{claude.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    run = await start_fleet(
        sandbox.layout("cc", {"name": "Ada", "cli": "claude", "cwd": str(proj), "env": env})
    )
    return run, proj


@pytest.mark.parametrize(
    ("choice", "option"), [("yes", "1. Yes"), ("2", "2. Yes, and always allow"), ("no", "3. No")]
)
async def test_claude_code(sandbox, start_fleet, fake, choice, option) -> None:
    run, proj = await claude_fleet(sandbox, start_fleet, fake)
    await run.wait_states("idle", timeout=START)
    fake.push(touch("Bash", description="Create a file"), Reply("Done."))
    agent, question = await ask(run, "Ada", "make a file")
    assert question == f"Do you want to proceed? (Bash command: touch {MARKER})"
    options = agent.tracker.reading.options
    assert [key for key, _ in options] == ["1", "2", "3"]
    assert (options[0][1], options[2][1]) == ("Yes", "No")
    reply = await answer(sandbox, run, "Ada", choice)
    assert reply["option"].startswith(option)
    assert reply["keys"] == [choice if choice.isdigit() else "1" if choice == "yes" else "3"]
    await (made(run, proj) if choice != "no" else not_made(run, "Ada", proj))


async def test_claude_code_dialog_without_numbers_is_walked_with_the_arrows(
    sandbox, start_fleet, fake
) -> None:
    """Claude Code's API key dialog lists `Yes` / `❯ No (recommended)` with no numbers."""
    run, _ = await claude_fleet(sandbox, start_fleet, fake, api_key="sk-ant-some-other-key-xxxx")
    await run.wait_states("needs-permission", ["Ada"], timeout=START)
    agent = run.fleet.agents["Ada"]
    assert agent.tracker.reading.options == (("1", "Yes"), ("2", "No (recommended)"))
    reply = await answer(sandbox, run, "Ada", "yes")
    assert reply["keys"] == ["Up", "Enter"]
    await run.wait_states("idle", ["Ada"], timeout=START)
    fake.push(Reply("Hello from the approved key."))
    run.fleet.send(["Ada"], "hello")
    await async_wait_until(
        lambda: "hello" in fake.user_texts(), TURN, "a turn with the key", run.screens
    )


# ---------------------------------------------------------------------- Codex
@pytest.mark.parametrize(("choice", "keys"), [("yes", ["y"]), ("no", ["Escape"])])
async def test_codex(sandbox, start_fleet, codex_layout, fake, choice, keys) -> None:
    run = await start_fleet(codex_layout())
    await run.wait_states("idle", timeout=START)
    fake.push(
        Reply(
            tool=(
                "exec_command",
                {
                    "cmd": f"touch {MARKER}",
                    "sandbox_permissions": "require_escalated",
                    "justification": "Create the marker file?",
                },
            )
        )
    )
    agent, question = await ask(run, "Hilbert", "make the marker file")
    assert f"touch {MARKER}" in question
    assert agent.tracker.reading.options[0] == ("1", "Yes, proceed (y)")
    reply = await answer(sandbox, run, "Hilbert", choice)
    assert reply["keys"] == keys
    project = codex_layout.project
    await (made(run, project) if choice == "yes" else not_made(run, "Hilbert", project))


# ---------------------------------------------------------------------- Gemini CLI
@pytest.mark.parametrize(
    ("choice", "option"), [("yes", "1. Allow once"), ("no", "3. No, suggest changes (esc)")]
)
async def test_gemini_cli(sandbox, start_fleet, fake, choice, option) -> None:
    gemini = require_cli("gemini")
    root = sandbox.files / "gemini"
    env = gemini_env(gemini_home(root / "home"), fake.base_url, gemini_bin(gemini, root / "bin"))
    repo = root / "repo"
    repo.mkdir(parents=True)
    run = await start_fleet(
        sandbox.layout(
            "geminis",
            {"name": "Ada", "cli": "gemini", "model": GEMINI_MODEL, "env": env, "cwd": str(repo)},
        )
    )
    await run.wait_states("idle", timeout=START)
    fake.push(
        Reply(
            "",
            tool=(
                "run_shell_command",
                {"command": f"touch {MARKER}", "description": "Make a file."},
            ),
        )
    )
    _, question = await ask(run, "Ada", "Make a file.")
    assert question == "Allow execution of [Shell]?"
    reply = await answer(sandbox, run, "Ada", choice)
    assert reply["option"] == option
    await (made(run, repo) if choice == "yes" else not_made(run, "Ada", repo))


# ---------------------------------------------------------------------- aider
@pytest.mark.parametrize(("choice", "keys"), [("yes", ["y", "Enter"]), ("no", ["n", "Enter"])])
async def test_aider(sandbox, start_fleet, fake, choice, keys) -> None:
    aider = require_cli("aider")
    root = sandbox.files / "aider"
    env = aider_env(aider_home(root / "home"), fake.base_url, aider_bin(aider, root / "bin"))
    repo = make_repo(root / "repo")
    run = await start_fleet(
        sandbox.layout(
            "aiders",
            {
                "name": "Ada",
                "cli": "aider",
                "model": AIDER_MODEL,
                "args": list(FLAGS),
                "env": env,
                "cwd": str(repo),
            },
        )
    )
    await run.wait_states("idle", timeout=START)
    # a new file in whole-file format: aider asks before it creates it
    fake.push(Reply(f"{MARKER}\n```\nhello\n```\n"))
    agent, question = await ask(run, "Ada", "Write the marker file.")
    assert question == f"Create new file? {MARKER}"
    assert agent.tracker.reading.options == (("1", "Yes"), ("2", "No"))
    reply = await answer(sandbox, run, "Ada", choice)
    assert reply["keys"] == keys
    await (made(run, repo) if choice == "yes" else not_made(run, "Ada", repo))


# ---------------------------------------------------------------------- opencode
@pytest.mark.parametrize(("choice", "option"), [("yes", "1. Allow once"), ("no", "3. Reject")])
async def test_opencode(sandbox, start_fleet, fake, tmp_path, choice, option) -> None:
    opencode = require_cli("opencode")
    project = tmp_path / "project"
    project.mkdir()
    env = opencode_env(tmp_path / "oc-home", fake.base_url, permission={"bash": "ask"})
    run = await start_fleet(
        sandbox.layout(
            "ocfleet",
            {
                "name": "Noether",
                "cli": "opencode",
                "command": str(opencode),
                "cwd": str(project),
                "env": env,
            },
        )
    )
    await run.wait_states("idle", timeout=START)
    fake.default = Reply("Done.")
    fake.push(touch("bash", description="Make a file"))
    _, question = await ask(run, "Noether", "make a file please")
    assert question == f"Shell command: touch {MARKER}"
    reply = await answer(sandbox, run, "Noether", choice)
    assert reply["option"] == option
    await (made(run, project) if choice == "yes" else not_made(run, "Noether", project))


# ---------------------------------------------------------------------- Copilot CLI
@pytest.mark.parametrize(
    ("choice", "option", "keys"),
    [
        ("yes", "1. Yes", ["1"]),
        ("2", "2. Yes, and don't ask again", ["2"]),
        ("no", "3. No, and tell Copilot", ["Escape"]),
    ],
)
async def test_copilot_cli(sandbox, start_fleet, fake, tmp_path, choice, option, keys) -> None:
    copilot = require_cli("copilot")
    project = tmp_path / "project"
    project.mkdir()
    env = copilot_env(tmp_path / "cp-home", fake.base_url, trusted=(project,))
    run = await start_fleet(
        sandbox.layout(
            "cpfleet",
            {
                "name": "Turing",
                "cli": "copilot",
                "command": str(copilot),
                "cwd": str(project),
                "env": env,
            },
        )
    )
    await run.wait_states("idle", timeout=START)
    fake.default = Reply("Done.")
    fake.push(touch("bash", description="Create a file"))
    _, question = await ask(run, "Turing", "make a file please")
    assert question == "run this command"
    reply = await answer(sandbox, run, "Turing", choice)
    assert reply["option"].startswith(option)
    assert reply["keys"] == keys
    await (made(run, project) if choice != "no" else not_made(run, "Turing", project))
