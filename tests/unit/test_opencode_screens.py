"""OpencodeAdapter.read on real screens of opencode-ai 1.18.33, captured from tmux (120x40).

Regenerate with `python -m swarm_tui.testing.opencode_offline tests/fixtures/screens`; the
timing-dependent `submitted-pending` (after Enter, before the answer starts) and
`working-retrying` (the fake server gone) were caught by polling the same way.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading, plain
from swarm_tui.agents.opencode import OpencodeAdapter
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.local import LocalHost

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def screen(name: str) -> list[str]:
    return (SCREENS / f"opencode-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return OpencodeAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("starting", Reading(None)),
        ("idle", Reading(AgentState.IDLE, "")),  # `Ask anything… "…"` is a placeholder
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py")),
        (
            "draft-multiline",
            Reading(AgentState.IDLE, "first line of the plan\nsecond line: run it"),
        ),
        ("draft-pasted", Reading(AgentState.IDLE, "[Pasted ~12 lines]")),
        ("submitted-pending", Reading(AgentState.WORKING, "")),
        ("working", Reading(AgentState.WORKING, "")),
        ("working-draft", Reading(AgentState.WORKING, "and then the lexer")),
        ("working-retrying", Reading(AgentState.WORKING, "")),
        ("idle-after-turn", Reading(AgentState.IDLE, "")),
        # which option is selected only colours say (see test_answers.py)
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Shell command: touch made-by-agent.txt",
                None,
                (("1", "Allow once"), ("2", "Allow always"), ("3", "Reject")),
            ),
        ),
        (
            "always-allow",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Always allow: touch *",
                None,
                (("1", "Confirm: allow always"), ("2", "Cancel")),
            ),
        ),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_screen_with_escape_sequences_reads_the_same_once_plain() -> None:
    ansi = screen("working-ansi")
    assert any("\x1b[" in ln for ln in ansi)
    assert OpencodeAdapter().read([plain(ln) for ln in ansi]) == read("working")


def test_a_users_message_in_the_transcript_is_not_the_draft() -> None:
    # the transcript marks user messages with the same bar as the input box
    lines = screen("idle-after-turn")
    assert any("please look at the parser" in ln for ln in lines)
    assert read("idle-after-turn").draft == ""


def test_submission_is_confirmed_by_the_emptied_box_only() -> None:
    adapter = OpencodeAdapter()
    before = screen("draft")
    assert adapter.submitted(before, screen("idle"), "x") is True
    assert adapter.submitted(before, screen("submitted-pending"), "x") is True
    assert adapter.submitted(before, before, "x") is False


def test_screens_without_its_chrome_tell_nothing() -> None:
    adapter = OpencodeAdapter()
    assert adapter.read([]) == Reading(None)
    assert adapter.read(["$ opencode", "esc interrupt", "Permission required"]) == Reading(None)


def _agent(**fields: object) -> ResolvedAgent:
    base: dict[str, object] = dict(
        name="Noether",
        cli="opencode",
        model="",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=(),
        env={},
        cwd="/tmp",
        index=0,
    )
    return ResolvedAgent(**{**base, **fields})  # type: ignore[arg-type]


def test_launch_passes_model_and_args_and_honours_an_explicit_executable() -> None:
    ctx = LocalHost("s", "f").launch_context()
    adapter = OpencodeAdapter()
    argv = shlex.split(
        adapter.launch(_agent(model="anthropic/claude-sonnet-4-5", args=("--port", "0")), ctx)
    )
    assert argv == ["opencode", "--model", "anthropic/claude-sonnet-4-5", "--port", "0"]
    # `command` is shell words, as for cli = "generic"
    argv = shlex.split(adapter.launch(_agent(command="'/opt/my tools/opencode' --pure"), ctx))
    assert argv == ["/opt/my tools/opencode", "--pure"]


def test_headless_is_opencode_run_reading_stdin() -> None:
    assert OpencodeAdapter().headless("") == ["opencode", "run"]
    assert OpencodeAdapter().headless("fake/m") == ["opencode", "run", "--model", "fake/m"]
