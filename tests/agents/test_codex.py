"""The real Codex CLI (pinned in swarm_tui/testing/clis.py) under swarm, offline: it talks to
a FakeLLM through a private CODEX_HOME (swarm_tui/testing/codex_offline.py).

Skipped, loudly, when Codex cannot be installed here; under CI=true that is a failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.fleet.store import Store
from swarm_tui.testing import async_wait_until
from swarm_tui.testing.codex_offline import conversation_texts
from swarm_tui.testing.fake_llm import Reply, last_user_text

pytestmark = pytest.mark.integration


async def _start(start_fleet, layout: Path):
    run = await start_fleet(layout)
    agent = run.fleet.agents["Hilbert"]
    assert agent.state is AgentState.STARTING
    await run.wait_states("idle", timeout=30)
    return run, agent


async def _deliver(run, text: str) -> None:
    (message,) = run.fleet.send(["Hilbert"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status in ("delivered", "failed"),
        30,
        f"delivery of {text[:30]!r}",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", f"{row.status}: {row.detail}\n{run.screens()}"
    assert row.detail == "", row.detail  # the first Enter submitted it: no rescue needed


async def test_codex_starts_idle_and_gets_exactly_the_injected_texts(
    start_fleet, codex_layout, fake
):
    run, agent = await _start(start_fleet, codex_layout())
    assert agent.tracker.reading.context_left == 100
    texts = [
        "fix the flaky test in tests/test_io.py",
        "first line of the plan\n  indented second line\n\nthird after a blank line",
        "/tmp/logs is where the build writes its logs",
        "/status of the build: green, say so in the changelog",
        "@README.md summarize this file in one line",
        # a paste this long shows as `[Pasted Content N chars]` in the box
        "\n".join(f"line {i}: " + "lorem ipsum, " * 8 + "end" for i in range(60)),
    ]
    for text in texts:
        await _deliver(run, text)
        await async_wait_until(
            lambda t=text: conversation_texts(fake)[-1:] == [t],
            20,
            "the model to get the text",
            lambda: repr(conversation_texts(fake)[-1:]),
        )
        await run.wait_states("idle", timeout=20)
    assert conversation_texts(fake) == texts


async def test_working_while_it_answers_then_idle(start_fleet, codex_layout, fake):
    run, agent = await _start(start_fleet, codex_layout())
    fake.push(Reply("Thinking it over.", delay=4))  # no text for 4 s: `Working (…)`
    await _deliver(run, "think first")
    await async_wait_until(
        lambda: agent.tracker.reading.state is AgentState.WORKING,
        10,
        "the `Working (… esc to interrupt)` line",
        run.screens,
    )
    await run.wait_states("working", timeout=5)
    await run.wait_states("idle", timeout=20)
    fake.push(Reply(" ".join(f"word{i}" for i in range(40)), delay=5))  # streams for 5 s
    await _deliver(run, "now stream")
    await run.wait_states("working", timeout=5)
    await async_wait_until(
        lambda: "word20" in "\n".join(agent.plain_screen()), 10, "the answer to stream", run.screens
    )
    assert agent.state is AgentState.WORKING  # mid-stream: not idle, nothing typed into it
    await run.wait_states("idle", timeout=20)
    assert conversation_texts(fake) == ["think first", "now stream"]


async def test_needs_permission_on_an_escalated_command(start_fleet, codex_layout, fake):
    run, agent = await _start(start_fleet, codex_layout())
    fake.push(
        Reply(
            tool=(
                "exec_command",
                {
                    "cmd": "touch approved.txt",
                    "sandbox_permissions": "require_escalated",
                    "justification": "Create approved.txt?",
                },
            )
        )
    )
    await _deliver(run, "make the marker file")
    await run.wait_states("needs-permission", timeout=20)
    assert "touch approved.txt" in agent.tracker.reading.question
    assert not agent.tracker.ready
    run.sandbox.tmux("codexfleet").send_keys("Hilbert", "y")
    await run.wait_states("idle", timeout=20)
    assert (codex_layout.project / "approved.txt").exists()


async def test_new_starts_a_fresh_conversation(start_fleet, codex_layout, fake):
    run, agent = await _start(start_fleet, codex_layout())
    await _deliver(run, "remember the word kumquat")
    await run.wait_states("idle", timeout=20)
    assert agent.adapter.fresh_command == "/new"
    await _deliver(run, agent.adapter.fresh_command)
    await run.wait_states("idle", timeout=20)
    await _deliver(run, "what was the word?")
    await async_wait_until(
        lambda: conversation_texts(fake)[-1:] == ["what was the word?"],
        20,
        "the question to reach the model",
        run.screens,
    )
    last = [
        r.body
        for r in fake.requests
        if r.path.endswith("/responses") and last_user_text(r.body) == "what was the word?"
    ][-1]
    assert "kumquat" not in json.dumps(last["input"])  # the old conversation is gone
    assert "/new" not in conversation_texts(fake)  # a command, not a message


async def test_notify_reaches_swarm_and_sets_the_state(start_fleet, codex_layout, fake):
    run, agent = await _start(start_fleet, codex_layout(hooks=True))
    assert agent.tracker.signal is None
    await _deliver(run, "a quick one")
    await async_wait_until(
        lambda: agent.tracker.signal is AgentState.IDLE,
        20,
        "Codex's notify to call `swarm hook codex`",
        run.screens,
    )
    await run.wait_states("idle", timeout=10)


async def test_a_restart_after_tmux_died_resumes_the_conversation(
    start_fleet, codex_layout, fake, sandbox
):
    """The machine rebooted (tmux and the engine gone): the next start resumes the
    conversation the notify program reported, tells the agent its focus before what was
    queued meanwhile, and types that after, once."""
    layout = codex_layout(focus="the parser", hooks=True)  # notify reports the conversation
    run, agent = await _start(start_fleet, layout)
    await _deliver(run, "remember the word kumquat")
    await run.wait_states("idle", timeout=20)
    await async_wait_until(
        lambda: run.store.session("Hilbert"), 20, "the conversation's id from the notify program"
    )
    session = run.store.session("Hilbert")
    await run.stop()
    sandbox.tmux("codexfleet").run("kill-server", check=False)  # the reboot
    journal = Store(sandbox.db_path("codexfleet"))
    journal.enqueue_all("human", ["Hilbert"], "what was the word?", 0)  # queued meanwhile
    journal.close()
    run = await start_fleet(layout)
    agent = run.fleet.agents["Hilbert"]
    assert agent.resumed and agent.session == session
    await async_wait_until(
        lambda: conversation_texts(fake)[-1:] == ["what was the word?"],
        60,
        "the queued question to reach the model",
        run.screens,
    )
    texts = conversation_texts(fake)
    told = [t for t in texts if t.startswith("swarm: your CLI was started again")]
    assert len(told) == 1 and "Your focus: the parser" in told[0], texts
    assert texts.index(told[0]) < texts.index("what was the word?")
    assert texts.count("what was the word?") == 1
    last = [
        r.body
        for r in fake.requests
        if r.path.endswith("/responses") and last_user_text(r.body) == "what was the word?"
    ][-1]
    assert "kumquat" in json.dumps(last["input"])  # the same conversation, resumed
