"""The real aider (aider-chat 0.86.2) in a swarm fleet, offline against FakeLLM.

aider runs in its tmux window as a user would run it, pointed at FakeLLM as an
OpenAI-compatible server. The tests drive it only through the fleet (`Fleet.send` → the
injection queue → paste + Enter) and read its state only through the adapter, then check
what aider sent to the model: exactly the injected text (aider appends its edit-format
reminder to the user message; `user_part` cuts that off).

Skipped, loudly, when aider cannot be installed here; failed instead when CI=true.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.testing import async_wait_until
from swarm_tui.testing.aider_offline import (
    FLAGS,
    MODEL,
    agent_env,
    bin_dir,
    make_repo,
    prepare_home,
    user_part,
)
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.fake_llm import FakeLLM, Reply

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

LONG = "".join(
    f"{i:04d} the quick brown fox jumps over the lazy dog; 'q' \"qq\" $x #{{y}} "
    for i in range(400)
).strip()  # ~30 KB on one line


@pytest.fixture(scope="module")
def aider_exe() -> Path:
    return require_cli("aider")


def aider_layout(sandbox, fake: FakeLLM, aider: Path, name: str = "Ada") -> Path:
    root = sandbox.files / "aider"
    env = agent_env(prepare_home(root / "home"), fake.base_url, bin_dir(aider, root / "bin"))
    repo = make_repo(root / "repo")
    return sandbox.layout(
        "aiders",
        {
            "name": name,
            "cli": "aider",
            "model": MODEL,
            "args": list(FLAGS),
            "env": env,
            "cwd": str(repo),
        },
    )


def sent(fake: FakeLLM) -> list[str]:
    return [user_part(t) for t in fake.user_texts()]


async def deliver(run, name: str, text: str, timeout: float = 30.0) -> None:
    (message,) = run.fleet.send([name], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status not in ("queued", "sending"),
        timeout,
        f"message {message.id} to be typed",
        run.screens,
    )
    row = run.store.message(message.id)
    assert row.status == "delivered", (row.status, row.detail, run.screens())


async def test_messages_arrive_exactly_and_states_follow_the_screen(
    sandbox, start_fleet, aider_exe, fake
):
    run = await start_fleet(aider_layout(sandbox, fake, aider_exe))
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
        await deliver(run, "Ada", text)
        expected.append(text)
        await async_wait_until(
            lambda: len(fake.user_texts()) == len(expected),
            30,
            "aider to send the message",
            run.screens,
        )
        await run.wait_states("idle", timeout=30)
    assert sent(fake) == expected

    # a slow answer holds aider busy: working while it streams, then idle at its prompt
    fake.push(Reply("Streaming " + "slowly " * 40, delay=4.0))
    await deliver(run, "Ada", "Explain the plan.")
    await run.wait_states("working", timeout=10)
    assert ada.tracker.reading.state is not None  # the screen said so, not quiet time alone
    await run.wait_states("idle", timeout=30)
    assert sent(fake)[-1] == "Explain the plan."
    assert "slowly slowly" in "\n".join(ada.plain_screen())


async def test_a_confirm_question_needs_permission_and_answering_it_resumes(
    sandbox, start_fleet, aider_exe, fake
):
    run = await start_fleet(aider_layout(sandbox, fake, aider_exe))
    await run.wait_states("idle", timeout=60)
    ada = run.fleet.agents["Ada"]
    # mentioning a file of the repo makes aider ask before it sends anything
    await deliver(run, "Ada", "Please read notes.txt and summarise it.")
    await run.wait_states("needs-permission", timeout=15)
    assert ada.tracker.reading.question == "Add file to the chat? notes.txt"
    assert not ada.tracker.ready  # nothing is typed into a question
    assert fake.user_texts() == []

    # a queued message waits for the question to be answered
    (queued,) = run.fleet.send(["Ada"], "And then the calc module.")
    sandbox.tmux("aiders").send_keys("Ada", "n", "Enter")
    await async_wait_until(
        lambda: run.store.message(queued.id).status == "delivered",
        30,
        "the queued message after the answer",
        run.screens,
    )
    await async_wait_until(lambda: len(fake.user_texts()) == 2, 30, "both turns", run.screens)
    assert sent(fake) == ["Please read notes.txt and summarise it.", "And then the calc module."]

    # the model's answer can ask too: a new file in whole-file format
    fake.push(Reply("hello.py\n```\nprint('hello')\n```\n"))
    await run.wait_states("idle", timeout=30)
    await deliver(run, "Ada", "Write hello.py.")
    await run.wait_states("needs-permission", timeout=15)
    assert ada.tracker.reading.question == "Create new file? hello.py"


async def test_fresh_command_clears_the_conversation(sandbox, start_fleet, aider_exe, fake):
    run = await start_fleet(aider_layout(sandbox, fake, aider_exe))
    await run.wait_states("idle", timeout=60)
    adapter = run.fleet.agents["Ada"].adapter
    await deliver(run, "Ada", "Remember the number 42.")
    await run.wait_states("idle", timeout=30)
    await deliver(run, "Ada", adapter.fresh_command)
    await run.wait_states("idle", timeout=30)
    await deliver(run, "Ada", "What number?")
    await async_wait_until(lambda: len(fake.user_texts()) == 2, 30, "the new turn", run.screens)
    last = fake.requests[-1].body["messages"]
    assert not any("42" in str(m.get("content")) for m in last), last  # history is gone
    assert sent(fake) == ["Remember the number 42.", "What number?"]


async def test_slash_leading_text_that_is_no_command_reaches_the_model(
    sandbox, start_fleet, aider_exe, fake
):
    run = await start_fleet(aider_layout(sandbox, fake, aider_exe))
    await run.wait_states("idle", timeout=60)
    texts = ["/tmp/build.log shows the failure; read it.", "!important: do not push"]
    for i, text in enumerate(texts):
        await deliver(run, "Ada", text)
        await run.wait_states("idle", timeout=30)
        assert sent(fake) == texts[: i + 1]  # the turn ended (idle) after its request
