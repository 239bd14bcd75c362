"""CodexAdapter.read on real screens of Codex 0.171.0, captured from tmux.

tests/fixtures/screens/codex-*.txt are `capture-pane -p` of the real `codex` in a 120x40
window of swarm's tmux config, running offline against FakeLLM (see
swarm_tui/testing/codex_offline.py): starting, idle, drafts, working, streaming, approval,
pickers; `unrecognized` after Codex refused `/explain this please` (draft kept); `model-choice`
the first-start screen Codex shows for a model its catalog offers an upgrade (`--model
gpt-5.6-sol`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.codex import COMMANDS, CodexAdapter
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
IDLE, WORKING = AgentState.IDLE, AgentState.WORKING


def screen(name: str) -> list[str]:
    return (SCREENS / f"codex-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return CodexAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("starting-wrapper", Reading(None)),  # the npm wrapper's warning, no box yet
        ("starting", Reading(AgentState.STARTING, None, "", None)),
        ("idle", Reading(IDLE, "", "", 100)),
        ("idle-untrusted", Reading(IDLE, "", "", None)),  # default status line: no context
        ("idle-after-turn", Reading(IDLE, "", "", 100)),
        ("draft", Reading(IDLE, "fix the flaky test", "", 100)),
        (
            "draft-multiline",
            Reading(IDLE, "first line of the plan\n\nsecond line: run it", "", 100),
        ),
        ("draft-pasted", Reading(IDLE, "[Pasted Content 2000 chars]", "", 100)),
        ("working", Reading(WORKING, "", "", 100)),
        ("streaming", Reading(None, "", "", 100)),  # answer text streams: chrome cannot tell
        ("working-draft", Reading(None, "typed while busy", "", 100)),
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Would you like to run the following command? touch x",
                None,
                (
                    ("1", "Yes, proceed (y)"),
                    ("2", "Yes, and don't ask again for commands that start with `touch x` (p)"),
                    ("3", "No, and tell Codex what to do differently (esc)"),
                ),
                0,
            ),
        ),
        # a picker above the box would take Enter: not idle, so nothing is typed
        ("file-picker", Reading(None, "see @READ", "", 100)),
        ("slash-popup", Reading(None, "/new", "", 100)),
        # refused as an unknown command: the draft stays, and the box takes a message
        ("unrecognized", Reading(IDLE, "/explain this please\nand the second line", "", 100)),
        # no question line: the title and the options say what it asks
        (
            "model-choice",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Meet GPT-6 Sol: 1. Try new model / 2. Use existing model",
                None,
                (("1", "Try new model"), ("2", "Use existing model")),
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
    assert CodexAdapter().read([plain(ln) for ln in ansi]) == read("working")


def test_transcript_words_do_not_count_as_chrome() -> None:
    """An old `› …` message, `esc to interrupt` or a dialog's words in the transcript are
    not the input box, the status line or a dialog."""
    lines = screen("idle-after-turn")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("• Short."))
    lines[at] = "• Working (3s • esc to interrupt) Press enter to confirm or esc to cancel"
    assert CodexAdapter().read(lines).state is IDLE
    # the box hidden by an overlay: the last `›` is then a message with transcript below it
    cut = next(i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith("› Ask"))
    assert CodexAdapter().read(lines[:cut]).state is None


def test_submitted_sees_an_emptied_box_a_kept_draft_and_an_approval() -> None:
    codex = CodexAdapter()
    assert codex.submitted(screen("draft"), screen("working"), "slow one") is True
    assert codex.submitted(screen("idle"), screen("draft-pasted"), "x" * 2000) is False
    assert codex.submitted(screen("idle"), screen("permission"), "make a file") is True
    assert codex.submitted(screen("slash-popup"), screen("starting"), "/new") is True
    assert codex.submitted(screen("idle"), screen("starting-wrapper"), "hi") is None


def _agent(**fields: object) -> ResolvedAgent:
    base = dict(
        name="Hilbert",
        index=0,
        cli="codex",
        model="",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=[],
        env={},
        cwd="",
        host="local",
        gpus="",
        hooks=False,
    )
    return ResolvedAgent(**{**base, **fields})  # type: ignore[arg-type]


CTX = LaunchContext(
    python="python3", mock_agent="mock", bin_dir="/opt/sw/bin", socket="/tmp/s.sock"
)


def test_launch_without_daemon_with_model_args_and_notify() -> None:
    codex = CodexAdapter()
    assert codex.launch(_agent(), CTX) == "codex --no-daemon"
    line = codex.launch(_agent(model="gpt-5", args=["-s", "read-only"], hooks=True), CTX)
    assert line == (
        "codex --no-daemon --model gpt-5 -c "
        '\'notify=["/opt/sw/bin/swarm", "hook", "codex"]\' -s read-only'
    )


def test_hook_turn_complete_is_idle_except_the_title_side_thread() -> None:
    codex = CodexAdapter()
    done = {
        "type": "agent-turn-complete",
        "thread-id": "t1",
        "turn-id": "u1",
        "input-messages": ["fix it"],
        "last-assistant-message": "Done.",
    }
    assert codex.hook_state(done) is IDLE
    title = {
        **done,
        "input-messages": ["Generate a concise, single-line task title of at most 36 characters …"],
    }
    assert codex.hook_state(title) is None
    assert codex.hook_state({"type": "something-else"}) is None


def test_the_conversation_is_the_users_thread_not_the_title_side_thread() -> None:
    """Codex 0.171 names a conversation in an ephemeral thread whose notify may come after
    the real turn's; taking its id made `codex resume` answer "No saved session found"."""
    codex = CodexAdapter()
    real = {
        "type": "agent-turn-complete",
        "thread-id": "01a24619-ab88-7b23-9990-758d8f388b14",
        "turn-id": "01a24619-b490-73a2-85de-ca245cb6a124",
        "input-messages": ["remember the word kumquat"],
    }
    side = {
        "type": "agent-turn-complete",
        "thread-id": "01a24619-b4d0-7c60-8c79-832c78cdca0c",
        "turn-id": "01a24619-b4ef-7903-ae0b-ae8e66aea7de",
        "input-messages": [
            "Generate a concise, single-line task title of at most 36 characters and "
            "under five words where possible.\n\nUser prompt:\nremember the word kumquat"
        ],
    }
    assert codex.session_id(real) == "01a24619-ab88-7b23-9990-758d8f388b14"
    assert codex.session_id(side) == ""


def test_headless_reads_the_prompt_from_stdin() -> None:
    argv = CodexAdapter().headless("gpt-5")
    assert argv[:2] == ["codex", "exec"] and argv[-1] == "-"
    assert ["--model", "gpt-5"] == argv[argv.index("--model") : argv.index("--model") + 2]


def test_model_choice_reads_the_same_with_the_other_option_selected_and_in_colour() -> None:
    lines = screen("model-choice")
    first = lines.index("› 1. Try new model")
    lines[first : first + 2] = ["  1. Try new model", "› 2. Use existing model"]
    assert CodexAdapter().read(lines) == replace(read("model-choice"), cursor=1)
    ansi = screen("model-choice-ansi")
    assert CodexAdapter().read([plain(ln) for ln in ansi]) == read("model-choice")


def test_a_choice_without_question_or_title_still_asks_something() -> None:
    lines = ["› 1. Yes, continue", "  2. No, stop", "", "  enter/esc confirm · ^c quit"]
    assert (
        CodexAdapter().read(lines).question == "Codex asks for a choice: 1. Yes, continue "
        "/ 2. No, stop"
    )
    long = ["  " + "A very long title " * 10, "", *lines]
    question = CodexAdapter().read(long).question
    assert question.startswith("A very long title") and len(question) == 100


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("/new", "/new"),  # Codex's own commands stay commands
        ("/compact keep the plan", "/compact keep the plan"),
        ("/status of the build: green", "/status of the build: green"),
        ("/review the parser", "/review the parser"),
        ("/explain this please", " /explain this please"),  # "Unrecognized command"
        ("/statu", " /statu"),  # the popup would run /status
        ("/New", " /New"),  # commands are lower case
        ("/tmp/logs are full", " /tmp/logs are full"),
        ("/", " /"),
        ("!rm -rf build", " !rm -rf build"),  # a shell command in Codex
        ("fix it, then /new", "fix it, then /new"),
        (" /already spaced", " /already spaced"),
    ],
)
def test_typed_text_keeps_commands_and_escapes_the_rest(text: str, typed: str) -> None:
    assert CodexAdapter().typed_text(text) == typed


def test_the_fresh_command_is_one_of_codexs_commands() -> None:
    fresh = CodexAdapter().fresh_command
    assert fresh.startswith("/") and fresh[1:] in COMMANDS
    assert CodexAdapter().typed_text(fresh) == fresh


def test_clear_keys_reach_both_ends_of_a_draft() -> None:
    """A refused command leaves the cursor at the draft's start: keys that only delete
    backwards (C-u) would clear nothing there, so the keys delete both ways."""
    keys = CodexAdapter().clear_draft_keys
    assert keys.count("C-u") >= 64 and keys.count("C-k") >= 64
    assert "C-c" not in keys  # on an empty box Codex would quit
