"""GeminiAdapter.read on real screens of Gemini CLI 0.61.0, captured from tmux against FakeLLM.

The captures in tests/fixtures/screens/gemini-*.txt are `capture-pane -p` of `gemini` in a
120x40 window (swarm's tmux config), driven by send-keys and paste-buffer; regenerate them
with `.venv/bin/python -m swarm_tui.testing.gemini_offline tests/fixtures/screens`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.gemini import GeminiAdapter

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def screen(name: str) -> list[str]:
    return (SCREENS / f"gemini-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return GeminiAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("idle", Reading(AgentState.IDLE, "")),
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py")),
        # Gemini CLI shows a tab as four spaces
        ("draft-multiline", Reading(AgentState.IDLE, "first line of the plan\n    second line")),
        ("working", Reading(AgentState.WORKING, "")),
        ("idle-after-turn", Reading(AgentState.IDLE, "")),
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Allow execution of [Shell]?",
                None,
                (
                    ("1", "Allow once"),
                    ("2", "Allow for this session"),
                    ("3", "No, suggest changes (esc)"),
                ),
            ),
        ),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_screen_with_escape_sequences_reads_the_same_once_plain() -> None:
    ansi = screen("working-ansi")
    assert any("\x1b[" in ln for ln in ansi)
    assert GeminiAdapter().read([plain(ln) for ln in ansi]) == read("working")


def test_banner_without_an_input_box_is_starting() -> None:
    lines = screen("idle-after-turn")
    cut = next(i for i, ln in enumerate(lines) if "Tips for getting started" in ln)
    assert GeminiAdapter().read(lines[:cut]) == Reading(AgentState.STARTING)


def test_transcript_echo_of_a_message_is_not_the_input_box() -> None:
    # the permission screen shows the user's message ` > list the files` above the dialog
    lines = screen("permission")
    assert any(ln.startswith(" > list the files") for ln in lines)
    assert read("permission").draft is None


def test_a_dialog_answered_and_gone_is_not_a_question() -> None:
    assert read("idle-after-turn").state is AgentState.IDLE
    assert "Allow once" not in "\n".join(screen("idle-after-turn"))


def test_submitted_reads_the_box() -> None:
    adapter = GeminiAdapter()
    assert adapter.submitted(screen("draft"), screen("working"), "x") is True
    assert adapter.submitted(screen("idle"), screen("draft"), "x") is False


def test_headless_reads_stdin() -> None:
    argv = GeminiAdapter().headless("gemini-2.5-flash")
    assert argv[:3] == ["gemini", "-p", ""]
    assert argv[-2:] == ["--model", "gemini-2.5-flash"]
