"""The real Claude Code under swarm, offline: it runs in a tmux window against FakeLLM with a
seeded config dir (no login, onboarding or trust dialog), and swarm reads its states and
types into it. What FakeLLM received proves each message arrived exactly as sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.testing import async_holds, async_wait_until
from swarm_tui.testing.claude_offline import offline_env, seed_config
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import FakeLLM, Reply, last_user_text

pytestmark = pytest.mark.integration

START = 45.0  # seconds for Claude Code to start (first run of a 400 MB binary on a cold disk)
TURN = 20.0  # seconds for a turn against FakeLLM


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude")


async def start_claude(
    sandbox: Any, start_fleet: Any, claude: Path, fake: FakeLLM, hooks: bool = False
) -> tuple[Any, Any, Path]:
    """A fleet of one Claude Code agent, Ada, in its own project dir; waits until idle."""
    proj = sandbox.files / "proj"
    proj.mkdir(exist_ok=True)
    config = seed_config(sandbox.files / "claude-config", [proj])
    env = {
        **offline_env(config, fake.base_url),
        "PATH": f"{claude.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    spec: dict[str, Any] = {"name": "Ada", "cli": "claude", "cwd": str(proj), "env": env}
    if hooks:
        spec["hooks"] = True
    run = await start_fleet(sandbox.layout("cc", spec))
    agent = run.fleet.agents["Ada"]
    assert agent.state is AgentState.STARTING
    await run.wait_states("idle", timeout=START)
    assert agent.tracker.reading == type(agent.tracker.reading)(AgentState.IDLE, "")
    return run, agent, proj


async def deliver(run: Any, fake: FakeLLM, text: str, timeout: float = TURN) -> None:
    """Send `text` to Ada; wait until it is delivered, FakeLLM got it and Ada is idle again."""
    (message,) = run.fleet.send(["Ada"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        TURN,
        f"delivery of {text[:30]!r}",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", (row.status, row.detail, run.screens())
    await async_wait_until(
        lambda: fake.user_texts()[-1:] == [text],
        timeout,
        f"FakeLLM to receive {text[:30]!r}",
        lambda: f"{fake.user_texts()[-3:]!r}\n{run.screens()}",
    )
    await run.wait_states("idle", timeout=TURN)


async def test_starts_idle_and_takes_each_kind_of_message_exactly(
    sandbox, start_fleet, claude, fake
) -> None:
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake)
    long = "\n".join(f"line {i}: keep going with step {i} of the plan" for i in range(1, 46))
    for text in [
        "fix the flaky test in tests/test_io.py",
        "first line of the plan\nsecond line: run it\n\n  indented fourth line",
        "please look at @nowhere/missing.py and @READ",  # the @ file picker pops up
        long,  # shown as [Pasted text #1 +44 lines] until submitted
        "- starts with a dash; ends with a semicolon;",
    ]:
        await deliver(run, fake, text)


async def test_stale_draft_is_cleared_before_a_message(sandbox, start_fleet, claude, fake) -> None:
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake)
    server = sandbox.tmux("cc")
    server.send_keys("Ada", "half-typed line one", literal=True)
    server.send_keys("Ada", "C-j")  # Claude Code's newline key: a two-line draft
    server.send_keys("Ada", "and line two", literal=True)
    await async_wait_until(
        lambda: agent.tracker.reading.draft == "half-typed line one\nand line two",
        TURN,
        "the stale draft",
        run.screens,
    )
    await deliver(run, fake, "the real message")


async def test_text_starting_with_a_slash_reaches_the_model(
    sandbox, start_fleet, claude, fake
) -> None:
    run, _, _ = await start_claude(sandbox, start_fleet, claude, fake)
    await deliver(run, fake, "/notacommand please read this", timeout=5)


async def test_working_while_the_reply_streams_then_idle(
    sandbox, start_fleet, claude, fake
) -> None:
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake)
    fake.push(
        Reply(
            "A slow answer, streamed over four seconds, word by word, so the busy "
            "state holds: esc to interrupt. Do you want to proceed?",
            delay=4,
        )
    )
    run.fleet.send(["Ada"], "explain the lexer")
    await async_wait_until(
        lambda: (
            agent.tracker.reading.state is AgentState.WORKING and agent.state is AgentState.WORKING
        ),
        TURN,
        "Ada's screen to show work",
        run.screens,
    )
    # the screen (not just "a message was typed") says working while the stream runs
    await async_holds(lambda: agent.state is AgentState.WORKING, 2.0, "working", run.screens)
    await run.wait_states("idle", timeout=TURN)
    assert agent.tracker.reading.state is AgentState.IDLE
    assert agent.tracker.reading.draft == ""


async def test_needs_permission_on_a_tool_call(sandbox, start_fleet, claude, fake) -> None:
    run, agent, proj = await start_claude(sandbox, start_fleet, claude, fake)
    fake.push(
        Reply(
            tool=("Bash", {"command": "touch made-by-claude.txt", "description": "Create a file"})
        ),
        Reply("Created it."),
    )
    (message,) = run.fleet.send(["Ada"], "make a file")
    await run.wait_states("needs-permission", timeout=TURN)
    assert agent.tracker.reading.question == (
        "Do you want to proceed? (Bash command: touch made-by-claude.txt)"
    )
    assert run.store.message(message.id).status == "delivered"
    assert not (proj / "made-by-claude.txt").exists()
    sandbox.tmux("cc").send_keys("Ada", "1")  # the human says yes
    await run.wait_states("idle", timeout=TURN)
    assert (proj / "made-by-claude.txt").exists()


async def test_clear_starts_a_fresh_conversation(sandbox, start_fleet, claude, fake) -> None:
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake)
    await deliver(run, fake, "remember the number 4711")
    assert any("4711" in str(r.body.get("messages")) for r in fake.requests)
    (message,) = run.fleet.send(["Ada"], agent.adapter.fresh_command, sender="swarm")
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered",
        TURN,
        "/clear delivered",
        run.screens,
    )
    await run.wait_states("idle", timeout=TURN)
    sent = len(fake.requests)
    await deliver(run, fake, "what number did I say?")
    fresh = [
        r.body for r in fake.requests[sent:] if last_user_text(r.body) == "what number did I say?"
    ]
    assert fresh and "4711" not in str(fresh[-1].get("messages"))
    assert "/clear" not in fake.user_texts()  # a command, never sent to the model


async def test_stop_hook_reaches_swarm_and_sets_idle(sandbox, start_fleet, claude, fake) -> None:
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake, hooks=True)
    assert agent.tracker.signal is None
    fake.push(Reply("Working on it, slowly.", delay=2))
    run.fleet.send(["Ada"], "run the hook")
    await async_wait_until(lambda: agent.state is AgentState.WORKING, TURN, "working", run.screens)
    # `swarm hook claude` ran in Ada's pane (swarm's bin dir first on PATH, SWARM_TOKEN set)
    await async_wait_until(
        lambda: agent.tracker.signal is AgentState.IDLE, TURN, "the Stop hook's signal", run.screens
    )
    await run.wait_states("idle", timeout=TURN)


async def test_a_restart_after_tmux_died_resumes_the_conversation(
    sandbox, start_fleet, claude, fake
) -> None:
    """The machine rebooted (tmux and the engine gone): the next start runs `claude
    --resume` with the session its hooks reported, tells Ada it was started again before
    what was queued meanwhile, and types that after, once."""
    from swarm_tui.fleet.store import Store

    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake, hooks=True)
    await deliver(run, fake, "remember the number 4711")
    await async_wait_until(
        lambda: run.store.session("Ada"), TURN, "the session id from the Stop hook", run.screens
    )
    session, layout = run.store.session("Ada"), run.fleet.loaded.path
    await run.stop()
    sandbox.tmux("cc").run("kill-server", check=False)  # the reboot
    journal = Store(sandbox.db_path("cc"))
    journal.enqueue_all("human", ["Ada"], "what number did I say?", 0)  # queued meanwhile
    journal.close()
    run = await start_fleet(layout)
    agent = run.fleet.agents["Ada"]
    assert agent.resumed and agent.session == session
    await async_wait_until(
        lambda: fake.user_texts()[-1:] == ["what number did I say?"],
        START + TURN,
        "the queued question to reach the model",
        lambda: f"{fake.user_texts()[-3:]!r}\n{run.screens()}",
    )
    texts = fake.user_texts()
    told = [i for i, t in enumerate(texts) if t.startswith("swarm: your CLI was started again")]
    assert len(told) == 1 and told[0] < texts.index("what number did I say?"), texts
    assert texts.count("what number did I say?") == 1
    asked = [r.body for r in fake.requests if last_user_text(r.body) == "what number did I say?"]
    assert "4711" in str(asked[-1].get("messages"))  # the same conversation, resumed
