"""MockAdapter.read on real screens of the mock agent, captured from tmux.

The captures in tests/fixtures/screens/mock-*.txt are `capture-pane -p` of
`python -m swarm_tui.agents.mock` in a 120x40 window, driven by send-keys and paste-buffer
(regenerate with tests/fixtures/screens/capture_screens.py).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.mock_adapter import MockAdapter, input_box
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.local import LocalHost

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def screen(name: str) -> list[str]:
    return (SCREENS / f"mock-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return MockAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("starting", Reading(AgentState.STARTING, None, "", 100)),
        ("idle", Reading(AgentState.IDLE, "", "", 100)),
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py", "", 100)),
        (
            "draft-multiline",
            Reading(AgentState.IDLE, "first line of the plan\nsecond line: run it", "", 100),
        ),
        ("draft-pasted", Reading(AgentState.IDLE, "[Pasted text #1 +6 lines]", "", 100)),
        ("working", Reading(AgentState.WORKING, "", "", 100)),
        ("working-draft", Reading(AgentState.WORKING, "and then the lexer", "", 100)),
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "run `make build`",
                100,
                (("1", "Yes"), ("2", "No, and tell the agent what to do differently (esc)")),
                0,
            ),
        ),
        ("idle-after-turn", Reading(AgentState.IDLE, "", "", 97)),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_screen_with_escape_sequences_reads_the_same_once_plain() -> None:
    ansi = screen("working-ansi")
    assert any("\x1b[" in ln for ln in ansi)  # it really holds escapes (capture -e -N)
    lines = [plain(ln) for ln in ansi]
    assert not any("\x1b" in ln for ln in lines)
    assert MockAdapter().read(lines) == read("working")


@pytest.mark.parametrize("name", ["echo-question", "echo-starting", "echo-busy"])
def test_idle_screen_whose_transcript_holds_trigger_words(name: str) -> None:
    assert read(f"idle-{name}") == Reading(AgentState.IDLE, "", "", 94)


def test_echoed_trigger_words_are_in_the_transcript_only() -> None:
    # guards the xfail above: these screens are idle boxes under a finished turn
    for name in ("echo-question", "echo-starting", "echo-busy"):
        lines = screen(f"idle-{name}")
        assert any(ln.startswith("● Done:") for ln in lines)
        assert input_box([ln for ln in lines if ln.strip()]) == ""


def test_blank_screen_cannot_tell() -> None:
    assert MockAdapter().read([""] * 40) == Reading(None, None, "", None)
    assert MockAdapter().read([]) == Reading(None, None, "", None)


def test_only_the_bottom_of_the_screen_counts() -> None:
    lines = screen("idle")
    old = ["╭─", "│ Do you want to run `rm -rf build/`?", "│ ❯ 1. Yes", "╰─"]
    filler = [f"● Reading src/file{i}.py" for i in range(14)]
    assert MockAdapter().read(old + filler + lines).state is AgentState.IDLE


def test_submitted_reads_the_box() -> None:
    adapter = MockAdapter()
    text = "fix the flaky test in tests/test_io.py"
    assert adapter.submitted(screen("draft"), screen("working"), text) is True
    assert adapter.submitted(screen("idle"), screen("draft"), text) is False
    assert adapter.submitted(screen("idle"), screen("draft-pasted"), "x") is False
    # a dialog hides the box: the screen cannot tell
    assert adapter.submitted(screen("draft"), screen("permission"), text) is None


def test_input_box_needs_two_rules_and_a_prompt() -> None:
    rule = "─" * 40
    assert input_box([rule, "❯ hi", rule]) == "hi"
    assert input_box([rule, "❯ a", "  b", rule]) == "a\nb"
    assert input_box(["❯ hi", rule]) is None
    assert input_box([rule, "no prompt", rule]) is None
    assert input_box([rule, rule]) is None


def test_launch_runs_the_mock_module_with_name_seed_model_and_args() -> None:
    agent = ResolvedAgent(
        name="Hilbert",
        cli="mock",
        model="mock-2",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=("--work", "2 s"),
        env={},
        cwd="/tmp",
        index=4,
    )
    argv = shlex.split(MockAdapter().launch(agent, LocalHost("s", "f").launch_context()))
    assert argv[:3] == [sys.executable, "-m", "swarm_tui.agents.mock"]
    assert argv[3:] == ["--name", "Hilbert", "--seed", "5", "--model", "mock-2", "--work", "2 s"]
