"""AiderAdapter.read on real screens of aider 0.86.2, captured from tmux against FakeLLM.

The captures in tests/fixtures/screens/aider-*.txt are `capture-pane -p` of aider in a 120x40
window (swarm's tmux config), driven by send-keys and paste-buffer; regenerate them with
`.venv/bin/python -m swarm_tui.testing.aider_offline tests/fixtures/screens`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.agents.aider import AiderAdapter, is_command
from swarm_tui.agents.base import AgentState, Reading, plain

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def screen(name: str) -> list[str]:
    return (SCREENS / f"aider-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return AiderAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("starting-first", Reading(None)),  # one line before the banner: cannot tell yet
        ("starting", Reading(AgentState.STARTING)),
        ("idle", Reading(AgentState.IDLE, "")),
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py")),
        # prompt_toolkit shows a tab as ^I
        ("draft-multiline", Reading(AgentState.IDLE, "first line of the plan\n^Isecond line")),
        ("waiting", Reading(AgentState.WORKING)),
        ("working", Reading(AgentState.WORKING)),
        ("idle-after-turn", Reading(AgentState.IDLE, "")),
        ("idle-after-clear", Reading(AgentState.IDLE, "")),
        (
            "permission-file",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Add file to the chat? notes.txt",
                None,
                (("1", "Yes"), ("2", "No"), ("3", "Don't ask again")),
            ),
        ),
        (
            "permission-create",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Create new file? hello.py",
                None,
                (("1", "Yes"), ("2", "No")),
            ),
        ),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_screen_with_escape_sequences_reads_the_same_once_plain() -> None:
    ansi = screen("working-ansi")
    assert any("\x1b[" in ln for ln in ansi)  # it really holds escapes (capture -e -N)
    assert AiderAdapter().read([plain(ln) for ln in ansi]) == Reading(AgentState.WORKING)


def test_a_question_being_answered_still_needs_permission() -> None:
    lines = screen("permission-file")
    last = max(i for i, ln in enumerate(lines) if ln.strip())
    lines[last] = lines[last].rstrip() + " n"
    assert read_lines(lines).state is AgentState.NEEDS_PERMISSION


def test_an_answered_question_followed_by_output_is_not_a_question() -> None:
    lines = screen("permission-file")
    last = max(i for i, ln in enumerate(lines) if ln.strip())
    lines[last] = lines[last].rstrip() + " n"
    lines.insert(last + 1, "Sure, I will look at it without the file.")
    assert read_lines(lines) == Reading(AgentState.WORKING)


def test_answer_scrolled_past_the_input_leaves_the_screen_undecided() -> None:
    lines = [f"word{i} " * 10 for i in range(40)]
    assert read_lines(lines) == Reading(None)


def test_transcript_lines_that_look_like_a_prompt_are_not_a_box() -> None:
    # an answer whose last line starts with '>' but no rule above it: not the input box
    lines = screen("working") + ["> quoted from the README", "> and more"]
    assert read_lines(lines).state is AgentState.WORKING


def test_files_in_the_chat_sit_between_the_rule_and_the_prompt() -> None:
    rule = "─" * 120
    lines = ["Tokens: 1.4k sent, 2 received.", rule, "calc.py notes.txt", "> half typed"]
    assert read_lines(lines) == Reading(AgentState.IDLE, "half typed")
    lines = ["Tokens: 1.4k sent, 2 received.", rule, "ask> "]
    assert read_lines(lines) == Reading(AgentState.IDLE, "")


def read_lines(lines: list[str]) -> Reading:
    return AiderAdapter().read(lines)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("draft", "waiting", True),  # the spinner replaced the box
        ("draft", "idle-after-clear", True),  # a command answered at once: an empty box
        ("draft", "permission-file", True),  # aider asks about the message: it went in
        ("idle", "draft", False),  # the text still sits in the box
    ],
)
def test_submitted(before: str, after: str, expected: bool) -> None:
    assert AiderAdapter().submitted(screen(before), screen(after), "x") is expected


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("fix the tests", "fix the tests"),
        ("/clear", "/clear"),
        ("/add calc.py", "/add calc.py"),
        ("/cle", "/cle"),  # aider runs a unique prefix as the command
        ("/tmp/out.log is empty, why?", " /tmp/out.log is empty, why?"),
        ("/t is ambiguous", " /t is ambiguous"),
        ("/", " /"),
        ("!important: read this", " !important: read this"),
        ("{", " {"),
        ("{go\n", " {go\n"),
        ("{\nnot a lone opener\n}", "{\nnot a lone opener\n}"),
        ("line one\nline two", "line one\nline two"),
    ],
)
def test_prepare_keeps_text_away_from_aiders_own_syntax(text: str, typed: str) -> None:
    assert AiderAdapter().typed_text(text) == typed


def test_is_command_follows_aiders_prefix_rule() -> None:
    assert is_command("/clear")
    assert is_command("/run make")
    assert not is_command("/usr/bin/env")
    assert is_command("/te")  # only /test starts so
    assert not is_command("/m")  # /map, /model ...: aider says "ambiguous"
    assert not is_command("clear")


def test_headless_reads_stdin_and_names_the_model() -> None:
    argv = AiderAdapter().headless("openai/fake-model")
    assert argv[0] == "aider"
    assert argv[argv.index("--message-file") + 1] == "/dev/stdin"
    assert argv[-2:] == ["--model", "openai/fake-model"]
    assert "--yes-always" in argv
