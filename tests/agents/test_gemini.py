"""The real Gemini CLI (@google/gemini-cli 0.61.0) in a swarm fleet, offline against FakeLLM.

Gemini CLI runs in its tmux window with a pre-seeded settings.json (no auth, theme or trust
dialog) and `GOOGLE_GEMINI_BASE_URL` pointing at FakeLLM. The tests drive it only through
the fleet and read its state only through the adapter, then check what it sent to the
model: exactly the injected text (its first turn carries a `<session_context>` part first;
`user_part` cuts that off).

Skipped, loudly, when Gemini CLI cannot be installed here; failed instead when CI=true.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.testing import async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import FakeLLM, Reply
from swarm_tui.testing.gemini_offline import MODEL, agent_env, bin_dir, prepare_home, user_part

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

LONG = "".join(
    f"{i:04d} the quick brown fox jumps over the lazy dog; 'q' \"qq\" $x #{{y}} "
    for i in range(100)
).strip()  # ~7 KB on one line


@pytest.fixture(scope="module")
def gemini_exe() -> Path:
    return require_cli("gemini")


def gemini_layout(sandbox, fake: FakeLLM, gemini: Path) -> Path:
    root = sandbox.files / "gemini"
    env = agent_env(prepare_home(root / "home"), fake.base_url, bin_dir(gemini, root / "bin"))
    (root / "repo").mkdir(parents=True)
    (root / "repo" / "notes.txt").write_text("Notes for the agent.\n")
    return sandbox.layout(
        "geminis",
        {"name": "Ada", "cli": "gemini", "model": MODEL, "env": env, "cwd": str(root / "repo")},
    )


def sent(fake: FakeLLM) -> list[str]:
    return [user_part(t) for t in fake.user_texts()]


async def deliver(run, text: str, timeout: float = 30.0) -> None:
    (message,) = run.fleet.send(["Ada"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        timeout,
        f"message {message.id} to be typed",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", (row.status, row.detail, run.screens())


async def test_messages_arrive_exactly_and_states_follow_the_screen(
    sandbox, start_fleet, gemini_exe, fake
):
    run = await start_fleet(gemini_layout(sandbox, fake, gemini_exe))
    ada = run.fleet.agents["Ada"]
    assert ada.state.value == "starting"
    await run.wait_states("idle", timeout=60)
    assert ada.tracker.reading.draft == ""

    expected = []
    for text in (
        "Fix the failing test, please.",
        "line one\nline two\n\tindented three\n\nafter a blank line",
        LONG,
    ):
        await deliver(run, text)
        expected.append(text)
        await async_wait_until(
            lambda: len(fake.user_texts()) == len(expected),
            30,
            "Gemini CLI to send the message",
            run.screens,
        )
        await run.wait_states("idle", timeout=30)
    assert sent(fake) == expected

    # a slow answer holds it busy: working while it streams, then idle at its prompt
    # varied words: Gemini CLI's loop detection flags a repeated phrase and says so
    fake.push(Reply("Streaming " + " ".join(f"word{i}" for i in range(60)), delay=4.0))
    await deliver(run, "Explain the plan.")
    await run.wait_states("working", timeout=10)
    assert ada.tracker.reading.state is not None  # the screen said so, not quiet time alone
    # after the answer Gemini CLI may ask the model again (its next-speaker check), which on
    # a loaded machine took over 30 s in CI: idle is what counts, not how soon
    await run.wait_states("idle", timeout=60)
    assert sent(fake)[-1] == "Explain the plan."


async def test_a_tool_call_needs_permission(sandbox, start_fleet, gemini_exe, fake):
    run = await start_fleet(gemini_layout(sandbox, fake, gemini_exe))
    await run.wait_states("idle", timeout=60)
    ada = run.fleet.agents["Ada"]
    fake.push(
        Reply(
            "",
            tool=(
                "run_shell_command",
                {"command": "touch made-by-agent.txt", "description": "Make a file."},
            ),
        )
    )
    await deliver(run, "Make a file.")
    await run.wait_states("needs-permission", timeout=20)
    assert ada.tracker.reading.question == "Allow execution of [Shell]?"
    assert not ada.tracker.ready
    # a queued message waits for the dialog to be answered (3: no)
    (queued,) = run.fleet.send(["Ada"], "Never mind.")
    sandbox.tmux("geminis").send_keys("Ada", "Escape")
    await async_wait_until(
        lambda: run.store.message(queued.id).status == "delivered",
        30,
        "the queued message after the answer",
        run.screens,
    )
    # the cancelled call leaves no model turn, so Gemini CLI sends the new text as one more
    # part of the same user turn: the last user message is both texts, one part each
    await async_wait_until(lambda: len(sent(fake)) == 2, 30, "the second message", run.screens)
    assert sent(fake) == ["Make a file.", "Make a file.\nNever mind."]
    assert not (Path(ada.spec.cwd) / "made-by-agent.txt").exists()


async def test_slash_leading_text_that_is_no_command(sandbox, start_fleet, gemini_exe, fake):
    run = await start_fleet(gemini_layout(sandbox, fake, gemini_exe))
    await run.wait_states("idle", timeout=60)
    text = "/tmp/build.log shows the failure; read it."
    await deliver(run, text)
    await run.wait_states("idle", timeout=30)
    await async_wait_until(lambda: sent(fake) == [text], 15, "the message", run.screens)


async def test_fresh_command_clears_the_conversation(sandbox, start_fleet, gemini_exe, fake):
    run = await start_fleet(gemini_layout(sandbox, fake, gemini_exe))
    await run.wait_states("idle", timeout=60)
    await deliver(run, "Remember the number 42.")
    await run.wait_states("idle", timeout=30)
    await deliver(run, run.fleet.agents["Ada"].adapter.fresh_command)
    await run.wait_states("idle", timeout=30)
    await deliver(run, "What number?")
    await async_wait_until(lambda: len(fake.user_texts()) == 2, 30, "the new turn", run.screens)
    contents = fake.requests[-1].body["contents"]
    assert "42" not in str(contents), contents  # the history is gone
    assert sent(fake) == ["Remember the number 42.", "What number?"]
