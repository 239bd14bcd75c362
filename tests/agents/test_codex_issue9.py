"""The real Codex (0.171.0) under swarm, offline (issue 9, items 2 and 14): text that Codex would
take as its own command (an unknown `/word`, a `!` shell command) reaches the model as typed; a
stale draft is cleared wherever the cursor is, also the draft an "Unrecognized command" leaves
with the cursor at its start; the first-start model-choice dialog reads as a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.testing import async_wait_until
from swarm_tui.testing.codex_offline import conversation_texts

pytestmark = pytest.mark.integration

START = 30.0
TURN = 20.0


async def _start(start_fleet, layout: Path):
    run = await start_fleet(layout)
    await run.wait_states("idle", timeout=START)
    return run, run.fleet.agents["Hilbert"]


async def _deliver(run, fake, text: str, expected: str | None = None) -> None:
    """Send `text`; it must be submitted by the first Enter and reach the model as `expected`."""
    (message,) = run.fleet.send(["Hilbert"], text)
    await async_wait_until(
        lambda: run.store.message(message.id).status in ("delivered", "failed"),
        TURN,
        f"delivery of {text[:30]!r}",
        run.screens,
    )
    row = run.store.message(message.id)
    assert (row.status, row.detail) == ("delivered", ""), f"{row.detail}\n{run.screens()}"
    want = text if expected is None else expected
    await async_wait_until(
        lambda: conversation_texts(fake)[-1:] == [want],
        TURN,
        f"the model to get {want[:30]!r}",
        lambda: f"{conversation_texts(fake)[-2:]!r}\n{run.screens()}",
    )
    await run.wait_states("idle", timeout=TURN)


def _paste_draft(run, text: str) -> None:
    """Paste `text` into Codex's box the way a terminal pastes (bracketed)."""
    server = run.sandbox.tmux("codexfleet")
    server.run("set-buffer", "-b", "draft", "--", text)
    server.run("paste-buffer", "-p", "-r", "-d", "-b", "draft", "-t", server.pane("Hilbert"))


def _type_draft(run, lines: list[str]) -> None:
    """Type a draft into Codex's box by hand, one line after another (Ctrl-J: a newline)."""
    server = run.sandbox.tmux("codexfleet")
    for i, line in enumerate(lines):
        if i:
            server.send_keys("Hilbert", "C-j")
        server.send_keys("Hilbert", line, literal=True)


async def test_unknown_slash_words_and_bangs_reach_the_model_as_typed(
    start_fleet, codex_layout, fake
):
    run, _ = await _start(start_fleet, codex_layout())
    texts = [
        "/explain this please",  # unknown: Codex would answer "Unrecognized command"
        "/statu",  # a prefix: Enter would pick /status from the popup
        "!touch bang-ran.txt",  # `!`: Codex would run it as a shell command
        "/status of the build: green",  # a command with text Codex sends as a message
    ]
    for text in texts:
        await _deliver(run, fake, text)
    assert conversation_texts(fake) == texts
    assert not (codex_layout.project / "bang-ran.txt").exists()


@pytest.mark.parametrize(
    "keys",
    [("Home", "Up", "C-a"), ("Up", "Left", "Left")],
    ids=["cursor-at-start", "cursor-mid-draft"],
)
async def test_a_stale_draft_is_cleared_wherever_the_cursor_is(
    start_fleet, codex_layout, fake, keys
):
    run, agent = await _start(start_fleet, codex_layout())
    _type_draft(run, ["half-typed first line", "and its second line"])
    run.sandbox.tmux("codexfleet").send_keys("Hilbert", *keys)
    await async_wait_until(
        lambda: agent.tracker.reading.draft == "half-typed first line\nand its second line",
        TURN,
        "the stale draft in the box",
        run.screens,
    )
    await _deliver(run, fake, "the real message")
    assert conversation_texts(fake) == ["the real message"]


async def test_after_an_unrecognized_command_the_next_message_goes_through(
    start_fleet, codex_layout, fake
):
    run, agent = await _start(start_fleet, codex_layout())
    # pasted by hand (swarm would escape it), then Enter once the box shows it: Codex
    # refuses it and keeps the draft, with the cursor at its start
    draft = "/explain this please\nand this second line"
    _paste_draft(run, draft)
    await async_wait_until(
        lambda: agent.tracker.reading.draft == draft,
        TURN,
        "the pasted draft in the box",
        run.screens,
    )
    run.sandbox.tmux("codexfleet").send_keys("Hilbert", "Enter")
    await async_wait_until(
        lambda: "Unrecognized command '/explain'" in "\n".join(agent.plain_screen()),
        TURN,
        "Codex to refuse the command",
        run.screens,
    )
    await async_wait_until(
        lambda: (
            agent.tracker.reading
            == type(agent.tracker.reading)(
                AgentState.IDLE, draft, "", agent.tracker.reading.context_left
            )
        ),
        TURN,
        "the refused draft, read as idle",
        run.screens,
    )
    await _deliver(run, fake, "the real message")
    assert conversation_texts(fake) == ["the real message"]


async def test_the_model_choice_dialog_reads_as_a_question(start_fleet, codex_layout, fake):
    # Codex 0.171.0's own model catalog offers gpt-5.6-sol an upgrade: a first start on it
    # shows "1. Try new model / 2. Use existing model" under the upgrade's title
    run = await start_fleet(codex_layout(model="gpt-5.6-sol"))
    agent = run.fleet.agents["Hilbert"]
    await run.wait_states("needs-permission", timeout=START)
    question = agent.tracker.reading.question
    assert question.startswith("Meet GPT-6 Sol"), question
    assert "Try new model" in question and "Use existing model" in question, question
    assert not agent.tracker.ready
    run.sandbox.tmux("codexfleet").send_keys("Hilbert", "Down")
    await async_wait_until(
        lambda: any(ln.strip() == "› 2. Use existing model" for ln in agent.plain_screen()),
        TURN,
        "the second choice to be selected",
        run.screens,
    )
    run.sandbox.tmux("codexfleet").send_keys("Hilbert", "Enter")
    await run.wait_states("idle", timeout=START)
    await _deliver(run, fake, "hello after the dialog")
