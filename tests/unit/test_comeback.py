"""Resuming a conversation after the tmux server was gone: which id each CLI's hooks report,
the command line that resumes it, and the open task an agent started again is told."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from swarm_tui.agents.registry import ADAPTERS, adapter_for
from swarm_tui.fleet.comeback import task_line
from swarm_tui.fleet.store import NewTask, Store
from tests.unit.test_adapters_command import CTX, _agent

SID = "0199a2b4-6c1e-7f00-9d1a-2b3c4d5e6f70"


def test_claude_reports_its_session_and_resumes_it_with_its_own_arguments() -> None:
    claude = adapter_for("claude")
    assert claude.session_id({"hook_event_name": "Stop", "session_id": SID}) == SID
    assert claude.session_id({"session_id": "x; rm -rf ~"}) == ""  # never a shell word
    assert claude.session_id({}) == ""
    spec = _agent("claude", model="m1", args=("--verbose",), hooks=True)
    words = shlex.split(claude.resume(spec, CTX, SID))
    assert words[words.index("--resume") + 1] == SID
    assert words[:3] == ["claude", "--model", "m1"] and words[-1] == "--verbose"
    assert "--settings" in words  # its hooks go on reporting


def test_codex_reports_its_thread_and_resumes_it_as_a_subcommand() -> None:
    codex = adapter_for("codex")
    assert codex.session_id({"type": "agent-turn-complete", "thread-id": SID}) == SID
    assert codex.session_id({"type": "agent-turn-complete"}) == ""
    words = shlex.split(codex.resume(_agent("codex", args=("--search",)), CTX, SID))
    assert words[:4] == ["codex", "resume", SID, "--no-daemon"] and words[-1] == "--search"


@pytest.mark.parametrize("cli", sorted(set(ADAPTERS) - {"claude", "codex"}))
def test_the_others_cannot_resume(cli: str) -> None:
    assert adapter_for(cli).resume(_agent(cli), CTX, SID) == ""


def test_an_agent_started_again_is_told_its_first_open_task(tmp_path: Path) -> None:
    store = Store(tmp_path / "j.sqlite3")

    class Gauss:
        name = "Gauss"

    assert task_line(store, Gauss()) == "You have no open task."  # type: ignore[arg-type]
    done = store.add_task("Gauss", NewTask(spec="Warm up"), "test")
    store.update_task(done, status="complete")
    tid = store.add_task("Gauss", NewTask(spec="Make the kernel 2x faster"), "test")
    store.add_task("Gauss", NewTask(spec="Then the docs"), "test")
    assert task_line(store, Gauss()) == (  # type: ignore[arg-type]
        f"Your open task #{tid} (pending): Make the kernel 2x faster"
    )
