"""CopilotAdapter.read on real screens of @github/copilot 1.0.102, captured from tmux (120x40)
offline against a FakeLLM (`python -m swarm_tui.testing.copilot_offline tests/fixtures/screens`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.copilot import CopilotAdapter
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.local import LocalHost

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def screen(name: str) -> list[str]:
    return (SCREENS / f"copilot-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return CopilotAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "trust",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "trust the files in this folder",
                None,
                (
                    ("1", "Yes"),
                    ("2", "Yes, and remember this folder for future sessions"),
                    ("3", "No (Esc)"),
                ),
                0,
            ),
        ),
        ("idle", Reading(AgentState.IDLE, "")),
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py")),
        (
            "draft-multiline",
            Reading(AgentState.IDLE, "first line of the plan\nsecond line: run it"),
        ),
        ("draft-pasted", Reading(AgentState.IDLE, "[Paste #1 - 12 lines]")),
        ("working", Reading(AgentState.WORKING, "")),
        ("working-draft", Reading(AgentState.WORKING, "and then the lexer")),
        ("idle-after-turn", Reading(AgentState.IDLE, "")),  # status: "ctrl+c again to exit"
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "run this command",
                None,
                (
                    ("1", "Yes"),
                    (
                        "2",
                        "Yes, and don't ask again for `touch` in this directory "
                        "(/tmp/cp-capture-u7xxuldg/proj)",
                    ),
                    ("3", "No, and tell Copilot what to do differently (Esc to stop)"),
                ),
                0,
            ),
        ),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_screen_with_escape_sequences_reads_the_same_once_plain() -> None:
    ansi = screen("working-ansi")
    assert any("\x1b[" in ln for ln in ansi)
    assert CopilotAdapter().read([plain(ln) for ln in ansi]) == read("working")


def test_banner_before_the_input_box_is_drawn_tells_nothing() -> None:
    # the first frames show the banner and tips, and no box yet
    lines = screen("idle")
    banner = lines[: next(i for i, ln in enumerate(lines) if ln.startswith("────"))]
    assert any("Copilot v" in ln for ln in banner)
    assert CopilotAdapter().read(banner) == Reading(None)
    assert CopilotAdapter().read([]) == Reading(None)


def test_transcript_quoting_chrome_words_does_not_fool_it() -> None:
    lines = screen("idle")
    at = next(i for i, ln in enumerate(lines) if "Tip:" in ln)
    lines[at] = " ● Working on it. Do you want to run this command? enter to select"
    assert CopilotAdapter().read(lines) == Reading(AgentState.IDLE, "")


def test_submission_is_confirmed_by_the_emptied_box() -> None:
    adapter = CopilotAdapter()
    assert adapter.submitted(screen("draft"), screen("working"), "x") is True
    assert adapter.submitted(screen("draft"), screen("draft"), "x") is False


def test_launch_and_headless() -> None:
    agent = ResolvedAgent(
        name="Ada",
        cli="copilot",
        model="gpt-5",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=("--banner",),
        env={},
        cwd="/tmp",
        index=0,
    )
    ctx = LocalHost("s", "f").launch_context()
    assert shlex.split(CopilotAdapter().launch(agent, ctx)) == [
        "copilot",
        "--model",
        "gpt-5",
        "--banner",
    ]
    argv = CopilotAdapter().headless("gpt-5")
    assert argv[0] == "copilot" and "-p" not in argv  # the prompt comes on stdin
    assert {"-s", "--allow-all-tools"} <= set(argv) and argv[-2:] == ["--model", "gpt-5"]


def test_typed_text_escapes_a_leading_bang_with_a_zero_width_space() -> None:
    """`!` first runs the text as a shell command; Copilot trims spaces before it looks."""
    adapter = CopilotAdapter()
    assert adapter.typed_text("!rm -rf build") == "\u200b!rm -rf build"
    assert adapter.typed_text("/tmp/build has the logs") == "/tmp/build has the logs"
    assert adapter.typed_text("important! read this") == "important! read this"
