"""Queues that must never stall on an event that may not come, with the real CLIs offline.

Claude Code's Stop hook reports idle while its screen still shows `running Stop hook`; once
the screen turns idle no further event comes. Codex, after an unknown `/word` typed by a
human, shows an error above its box and leaves it there. In both, messages queued
meanwhile must still be typed, once each.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarm_tui.testing import async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.codex_offline import codex_home, conversation_texts
from swarm_tui.testing.fake_llm import Reply
from tests.agents.test_claude import TURN, start_claude

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude")


def _settled(run, ids: list[int]) -> bool:
    return all(run.store.message(i).status not in ("queued", "sending") for i in ids)


async def test_claude_with_hooks_types_what_was_queued_during_a_slow_turn(
    sandbox, start_fleet, claude, fake
):
    run, agent, _ = await start_claude(sandbox, start_fleet, claude, fake, hooks=True)
    fake.push(Reply("Working through it slowly.", delay=6))
    (slow,) = run.fleet.send(["Ada"], "a slow one")
    await async_wait_until(
        lambda: run.store.message(slow.id).status == "delivered",
        TURN,
        "the slow message to be typed",
        run.screens,
    )
    (second,) = run.fleet.send(["Ada"], "and then this one")  # queued while it works
    (third,) = run.fleet.send(["Ada"], "and this last one")
    await async_wait_until(
        lambda: _settled(run, [second.id, third.id]),
        60,
        "the queued messages to be typed after the slow turn",
        run.screens,
    )
    rows = [run.store.message(i) for i in (second.id, third.id)]
    assert [r.status for r in rows] == ["delivered"] * 2, (rows, run.screens())
    await async_wait_until(
        lambda: fake.user_texts()[-1:] == ["and this last one"],
        TURN,
        "the model to get the last message",
        lambda: repr(fake.user_texts()),
    )
    texts = fake.user_texts()
    assert texts.count("and then this one") == 1 and texts.count("and this last one") == 1


async def test_codex_after_an_unknown_command_still_takes_its_queue(
    sandbox, start_fleet, codex_bin, fake, tmp_path
):
    project = tmp_path / "project"
    project.mkdir()
    env = codex_home(tmp_path / "codex-home", fake.base_url, [project])
    env["PATH"] = f"{codex_bin.parent}:{os.environ['PATH']}"
    run = await start_fleet(
        sandbox.layout(
            "codexq", {"name": "Hilbert", "cli": "codex", "cwd": str(project), "env": env}
        )
    )
    await run.wait_states("idle", timeout=30)
    server = sandbox.tmux("codexq")
    server.send_keys("Hilbert", "/explain this please", literal=True)  # a human at the box
    # Codex takes an Enter right after fast typing as a newline: press it once the box shows
    # the whole draft
    await async_wait_until(
        lambda: run.fleet.agents["Hilbert"].tracker.reading.draft == "/explain this please",
        15,
        "the typed draft in the box",
        run.screens,
    )
    server.send_keys("Hilbert", "Enter")
    await async_wait_until(
        lambda: (
            "Unrecognized command" in "\n".join(run.fleet.agents["Hilbert"].plain_screen())
            or "nrecognized" in server.capture("Hilbert")
        ),
        15,
        "Codex to refuse the unknown command",
        run.screens,
    )
    sent = [run.fleet.send(["Hilbert"], f"message {i} after the error")[0] for i in range(3)]
    await async_wait_until(
        lambda: _settled(run, [m.id for m in sent]),
        90,
        "every queued message to be typed",
        run.screens,
    )
    assert [run.store.message(m.id).status for m in sent] == ["delivered"] * 3, run.screens()
    await async_wait_until(
        lambda: conversation_texts(fake)[-1:] == ["message 2 after the error"],
        30,
        "the model to get the last message",
        lambda: repr(conversation_texts(fake)),
    )
    got = conversation_texts(fake)
    assert [got.count(f"message {i} after the error") for i in range(3)] == [1, 1, 1]
