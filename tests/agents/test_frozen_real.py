"""The real Claude Code and Codex, frozen while a message is typed (a starved machine).

The CLI's whole session is frozen with the cgroup freezer before the message is sent and
thawed after swarm's usual verification would have ended; the CLI then reads the paste and
the Enter in one go. What the real CLI does with that decides the bar: the message must end
`delivered` and the model must get its text exactly once (a trailing newline from an Enter
taken as one is allowed), and the next message must go through as usual.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.testing import async_holds, async_wait_until
from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.codex_offline import conversation_texts
from swarm_tui.testing.fake_llm import FakeLLM
from swarm_tui.testing.freezer import frozen
from tests.agents.test_claude import start_claude

pytestmark = pytest.mark.integration

FROZEN = 10.0  # seconds: past verification plus the rescue Enter's (3 s + 6 s)


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude")


async def frozen_delivery(run: Any, name: str, pid: int, texts: Any) -> None:
    store = run.store
    with frozen(pid):
        (message,) = run.fleet.send([name], "sent while the CLI was frozen")
        frozen_at = time.monotonic()
        await async_wait_until(
            lambda: store.message(message.id).status == "sending",
            10,
            "the message to be typed",
            run.screens,
        )
        await async_holds(
            lambda: store.message(message.id).status == "sending",
            FROZEN - (time.monotonic() - frozen_at),
            "no verdict while the CLI is frozen",
            lambda: f"{store.message(message.id)}\n{run.screens()}",
        )
    await async_wait_until(
        lambda: store.message(message.id).status != "sending",
        30,
        "a verdict once the CLI runs again",
        run.screens,
    )
    final = store.message(message.id)
    assert final.status == "delivered", (final, run.screens())
    await async_wait_until(
        lambda: texts() == ["sent while the CLI was frozen"],
        30,
        "the model to get the text once",
        lambda: repr(texts()),
    )
    await run.wait_states("idle", timeout=30)

    (after,) = run.fleet.send([name], "and the next one")
    await async_wait_until(
        lambda: store.message(after.id).status not in ("queued", "sending"),
        30,
        "the next message's verdict",
        run.screens,
    )
    assert store.message(after.id).status == "delivered", store.message(after.id)
    await async_wait_until(
        lambda: texts() == ["sent while the CLI was frozen", "and the next one"],
        30,
        "the model to get the next one",
        lambda: repr(texts()),
    )


async def test_claude_code_frozen_while_typed_into(
    sandbox, start_fleet, claude: Any, fake: FakeLLM
) -> None:
    run, _, _ = await start_claude(sandbox, start_fleet, claude, fake)
    pid = sandbox.tmux("cc").agent_windows()["Ada"].pid
    await frozen_delivery(run, "Ada", pid, lambda: [t.rstrip("\n") for t in fake.user_texts()])


async def test_codex_frozen_while_typed_into(
    sandbox, start_fleet, codex_layout, fake: FakeLLM
) -> None:
    run = await start_fleet(codex_layout())
    await run.wait_states("idle", timeout=30)
    pid = sandbox.tmux("codexfleet").agent_windows()["Hilbert"].pid
    await frozen_delivery(
        run, "Hilbert", pid, lambda: [t.rstrip("\n") for t in conversation_texts(fake)]
    )
