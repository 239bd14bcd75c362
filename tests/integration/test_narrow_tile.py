"""The mock agent in a window as narrow as the docked judge pane's (45 columns) still says it
works, and its adapter still reads it so. Its busy line was cut before `esc to interrupt`: a
judge read idle a second into every review, "ask again" was typed while it worked, and each
demo review ended without a verdict at wide terminals. The real mock in a real tmux window,
looked at the way the engine looks (a capture, then the adapter) while it works."""

from __future__ import annotations

import shlex
import sys
import time

import pytest

from swarm_tui.agents.base import AgentState, plain
from swarm_tui.agents.mock_adapter import MockAdapter
from swarm_tui.testing import Sandbox, wait_until

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("width", [45, 24])
def test_a_narrow_mock_reads_as_working_while_it_works(sandbox: Sandbox, width: int) -> None:
    mock = [
        sys.executable,
        "-m",
        "swarm_tui.agents.mock",
        "--name",
        "Judge",
        "--work",
        "4",
        "--startup",
        "0.2",
        "--permission-rate",
        "0",
        "--give-up-rate",
        "0",
        "--quiet-rate",
        "0",
        "--enter-guard",
        "0",
    ]  # the test types as a human would
    tmux = sandbox.tmux("narrow")
    tmux.run(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "narrow",
        "-x",
        str(width),
        "-y",
        "20",
        shlex.join(mock),
    )
    adapter = MockAdapter()

    def look() -> tuple[list[str], AgentState | None]:
        lines = [
            plain(ln) for ln in tmux.run("capture-pane", "-p", "-t", "narrow").stdout.splitlines()
        ]
        return lines, adapter.read(lines).state

    wait_until(
        lambda: look()[1] == AgentState.IDLE, 15, "the mock idle", lambda: "\n".join(look()[0])
    )
    tmux.run("send-keys", "-t", "narrow", "-l", "review the parser")
    wait_until(
        lambda: adapter.read(look()[0]).draft == "review the parser",
        15,
        "the text in its box",
        lambda: "\n".join(look()[0]),
    )
    tmux.run("send-keys", "-t", "narrow", "Enter")
    wait_until(
        lambda: any("Working…" in ln for ln in look()[0]),
        15,
        "the mock at work",
        lambda: "\n".join(look()[0]),
    )
    working = 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines, state = look()
        if not any("Working…" in ln for ln in lines):
            break  # its turn ended
        assert state == AgentState.WORKING, "\n".join(lines)
        working += 1
    assert working >= 5, f"only {working} looks while it worked"
    wait_until(
        lambda: look()[1] == AgentState.IDLE,
        20,
        "the mock idle after its turn",
        lambda: "\n".join(look()[0]),
    )
