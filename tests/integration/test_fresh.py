"""Fresh start: handoff note, a new conversation, then focus and note re-injected."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from swarm_tui.config.skills import skill_text
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


def tree(path: Path) -> list[str]:
    """Every file and directory under `path` (mock agents' own logs excepted: they grow)."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.suffix != ".log")


async def test_fresh_start_hands_off_clears_and_reinjects(sandbox, start_fleet):
    layout = sandbox.layout("fresh", mock_agent("Fay", focus="the tokenizer"))
    run = await start_fleet(layout)
    await run.wait_states("idle")
    run.fleet.send(["Fay"], "rewrite the tokenizer")
    await async_wait_until(
        lambda: sandbox.received("Fay") == ["rewrite the tokenizer"],
        10,
        "the task to arrive",
        run.screens,
    )

    cwd = Path(run.fleet.agents["Fay"].spec.cwd)
    assert cwd == sandbox.files  # the layout's directory: in real use, a source tree
    before = tree(cwd)
    listing = await sandbox.aswarm("fresh", "Fay")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.strip() == (
        "Fay: fresh start begun (handoff note, new conversation, "
        "then its focus and the note re-injected)"
    )
    await async_wait_until(
        lambda: len(sandbox.received("Fay")) == 4,
        30,
        "handoff request, /clear and the re-injection",
        run.screens,
    )
    task, handoff, clear, resume = sandbox.received("Fay")
    # the note goes to swarm's private state directory, never into the agent's cwd
    note = sandbox.home / "fleets" / "fresh" / "handoff-Fay.md"
    assert handoff == skill_text("handoff", {"path": str(note)})
    assert tree(cwd) == before
    assert stat.S_IMODE(note.parent.stat().st_mode) == 0o700
    assert note.read_text().startswith("# Handoff from Fay")
    assert clear == "/clear"
    assert resume.startswith("Fresh start: you continue an earlier session's work.")
    assert "Your focus: the tokenizer" in resume
    # the note the agent wrote before the clear comes back to it after
    assert "Handoff from Fay" in resume and "rewrite the tokenizer" in resume
    screen = "\n".join(run.fleet.agents["Fay"].plain_screen())
    assert (
        "rewrite the tokenizer" not in screen.split("(conversation cleared)")[-1]
        or "Fresh start" in screen
    )


async def test_fresh_start_of_unknown_agent_is_one_line(sandbox, start_fleet):
    layout = sandbox.layout("fresh2", mock_agent("Gil"))
    await start_fleet(layout)
    result = await sandbox.aswarm("fresh", "Nobody")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "swarm: no agent named 'Nobody' in fleet 'fresh2' (see `swarm ls`)"
    ]


async def test_fresh_start_without_a_handoff_says_so(sandbox, start_fleet):
    layout = sandbox.layout("fresh3", mock_agent("Hal", focus="the lexer"))
    run = await start_fleet(layout)
    await run.wait_states("idle")
    before = tree(sandbox.files)
    result = await sandbox.aswarm("fresh", "Hal", "--no-handoff")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "Hal: fresh start begun (no handoff note: new conversation, then its focus re-injected)"
    )
    await async_wait_until(
        lambda: len(sandbox.received("Hal")) == 2, 30, "/clear and the re-injection", run.screens
    )
    clear, resume = sandbox.received("Hal")
    assert clear == "/clear" and "Your focus: the lexer" in resume
    assert "(no handoff note was asked for)" in resume
    assert tree(sandbox.files) == before
    assert not (sandbox.home / "fleets" / "fresh3" / "handoff-Hal.md").exists()
