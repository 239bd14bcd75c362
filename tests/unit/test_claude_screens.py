"""ClaudeAdapter on real screens of Claude Code 2.1.332, captured from tmux.

The captures in tests/fixtures/screens/claude-*.txt are `capture-pane -p` of the real
`claude` (pinned in swarm_tui/testing/clis.py) in a 120x40 window of a private tmux server
with swarm's config, run offline against FakeLLM (regenerate with
`.venv/bin/python -m swarm_tui.testing.claude_offline capture tests/fixtures/screens`).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.agents.claude import COMMANDS, ClaudeAdapter, hook_settings, input_box
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
PROCEED = "Do you want to proceed? (Bash command: touch made-by-claude.txt)"


def screen(name: str) -> list[str]:
    return (SCREENS / f"claude-{name}.txt").read_text(encoding="utf-8").splitlines()


def read(name: str) -> Reading:
    return ClaudeAdapter().read(screen(name))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("starting", Reading(None)),
        ("idle", Reading(AgentState.IDLE, "")),
        ("draft", Reading(AgentState.IDLE, "fix the flaky test in tests/test_io.py")),
        (
            "draft-multiline",
            Reading(AgentState.IDLE, "first line of the plan\nsecond line: run it"),
        ),
        ("draft-pasted", Reading(AgentState.IDLE, "[Pasted text #1 +44 lines]")),
        ("draft-slash", Reading(AgentState.IDLE, "/notacommand please")),
        ("working", Reading(AgentState.WORKING, "")),
        ("working-draft", Reading(AgentState.WORKING, "and then the parser")),
        ("idle-after-turn", Reading(AgentState.IDLE, "")),
        # numbered options are picked by their number: no cursor
        (
            "permission",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                PROCEED,
                None,
                (
                    ("1", "Yes"),
                    (
                        "2",
                        "Yes, and always allow access to /tmp/claude-screens-9re6n2d8/proj from "
                        "this project",
                    ),
                    ("3", "No"),
                ),
            ),
        ),
        # options without numbers are walked with the arrows from the ❯
        (
            "api-key-dialog",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Do you want to use this API key? (Detected a custom API key in your environment)",
                None,
                (("1", "Yes"), ("2", "No (recommended)")),
                1,
            ),
        ),
        (
            "trust-dialog",
            Reading(
                AgentState.NEEDS_PERMISSION,
                None,
                "Quick safety check: Is this a project you created or one you trust? "
                "(Accessing workspace)",
                None,
                (("1", "No, exit"), ("2", "Yes, I trust this folder")),
                0,
            ),
        ),
    ],
)
def test_reading_of_each_captured_state(name: str, expected: Reading) -> None:
    assert read(name) == expected


def test_the_prompt_mark_is_followed_by_a_no_break_space() -> None:
    """Why the box is found by `❯` at column 0, never by `"❯ "`: Claude Code draws ❯ + NBSP."""
    assert "❯\xa0" in screen("idle")
    assert input_box(screen("idle")) == ""


def test_transcript_quoting_the_chrome_does_not_change_the_reading() -> None:
    """The reply on this screen quotes `esc to interrupt`, `Do you want to proceed?` and `❯`."""
    lines = screen("idle-after-turn")
    assert any("esc to interrupt" in ln and "Do you want to proceed?" in ln for ln in lines)
    assert read("idle-after-turn") == Reading(AgentState.IDLE, "")


def test_an_answer_that_looks_like_a_spinner_is_not_work() -> None:
    lines = screen("idle")
    top = next(i for i, ln in enumerate(lines) if ln.startswith("────"))
    lines[top - 1 : top - 1] = ["● Thinking…", "  Working… (3s)"]
    assert ClaudeAdapter().read(lines).state is AgentState.IDLE


@pytest.mark.parametrize(
    ("warning", "left"),
    [
        ("12% until auto-compact", 12),
        ("83% context used", 17),
        ("auto-compact next", 0),
        ("Context left until auto-compact: 9%", 9),
    ],
)
def test_context_warning(warning: str, left: int) -> None:
    """Not captured: the FakeLLM could not make 2.1.332 show its warning (a toast near the
    compaction threshold of a 1M window); the strings are the ones in the 2.1.332 binary,
    placed where its toasts go, above the box."""
    lines = screen("idle")
    top = next(i for i, ln in enumerate(lines) if ln.startswith("────"))
    lines.insert(top, " " * 90 + warning)
    assert ClaudeAdapter().read(lines) == Reading(AgentState.IDLE, "", "", left)


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        ("idle", "working", True),  # the box emptied and the turn started
        ("idle", "permission", True),  # the turn already asks for a tool
        ("idle", "draft-pasted", False),  # the marker is still in the box: one rescue Enter
        ("idle", "draft-multiline", False),  # the Enter became a newline
        ("idle", "idle", False),  # nothing arrived yet: keep looking
        ("idle", "starting", None),  # no box to read: never a blind Enter
    ],
)
def test_submitted(before: str, after: str, verdict: bool | None) -> None:
    assert ClaudeAdapter().submitted(screen(before), screen(after), "x") is verdict


def test_typed_text_keeps_commands_and_escapes_other_slashes() -> None:
    adapter = ClaudeAdapter()
    assert adapter.typed_text("/clear") == "/clear"
    assert adapter.typed_text("/compact keep the plan") == "/compact keep the plan"
    assert adapter.typed_text("/notacommand please") == " /notacommand please"
    assert adapter.typed_text("/usr/bin/env is broken") == " /usr/bin/env is broken"
    assert adapter.typed_text("look at @src/main.py") == "look at @src/main.py"
    assert {"clear", "compact", "model", "resume"} <= COMMANDS


def test_typed_text_escapes_a_leading_bang() -> None:
    """`!` first puts Claude Code in bash mode: the text would run as a shell command."""
    adapter = ClaudeAdapter()
    assert adapter.typed_text("!rm -rf build") == " !rm -rf build"
    assert adapter.typed_text("important! read this") == "important! read this"


def _agent(**kw: object) -> ResolvedAgent:
    base: dict[str, object] = dict(
        name="Gauss",
        cli="claude",
        model="",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=(),
        env={},
        cwd="/w",
        index=0,
    )
    return ResolvedAgent(**{**base, **kw})  # type: ignore[arg-type]


CTX = LaunchContext(python="python3", mock_agent="", bin_dir="/b", socket="/s")


def test_launch_plain_with_model_and_args() -> None:
    adapter = ClaudeAdapter()
    assert adapter.launch(_agent(), CTX) == "claude"
    line = adapter.launch(_agent(model="claude-sonnet-4-5", args=("--add-dir", "/data x")), CTX)
    assert shlex.split(line) == ["claude", "--model", "claude-sonnet-4-5", "--add-dir", "/data x"]


def test_launch_with_hooks_passes_settings_on_the_command_line() -> None:
    argv = shlex.split(ClaudeAdapter().launch(_agent(hooks=True), CTX))
    assert argv[:2] == ["claude", "--settings"]
    settings = json.loads(argv[2])
    assert settings == hook_settings()
    for event in ("Stop", "Notification"):
        (group,) = settings["hooks"][event]
        (hook,) = group["hooks"]
        # never fails: a Stop hook exiting 2 would keep Claude Code working
        assert hook["command"].startswith("swarm hook claude") and hook["command"].endswith(
            "|| true"
        )


@pytest.mark.parametrize(
    ("payload", "state"),
    [
        ({"hook_event_name": "Stop", "stop_hook_active": False}, AgentState.IDLE),
        (
            {
                "hook_event_name": "Notification",
                "notification_type": "permission_prompt",
                "message": "Claude needs your permission",
            },
            AgentState.NEEDS_PERMISSION,
        ),
        (
            {
                "hook_event_name": "Notification",
                "message": "Claude needs your permission to use Bash",
            },
            AgentState.NEEDS_PERMISSION,
        ),
        (
            {
                "hook_event_name": "Notification",
                "notification_type": "idle_prompt",
                "message": "Claude is waiting for your input",
            },
            AgentState.IDLE,
        ),
        ({"hook_event_name": "Notification", "notification_type": "auth_success"}, None),
        ({"hook_event_name": "SubagentStop"}, None),
        ({}, None),
    ],
)
def test_hook_state(payload: dict[str, object], state: AgentState | None) -> None:
    assert ClaudeAdapter().hook_state(payload) is state


def test_headless() -> None:
    assert ClaudeAdapter().headless("") == ["claude", "-p", "--output-format", "json"]
    assert ClaudeAdapter().headless("m") == [
        "claude",
        "-p",
        "--output-format",
        "json",
        "--model",
        "m",
    ]
