"""CursorAdapter from Cursor's documentation only.

NOT TESTED AGAINST THE REAL PROGRAM: Cursor's `agent` is installed by a script from cursor.com
(no npm/PyPI package) and needs a Cursor account; neither is reachable offline. The screen
lines below are the strings Cursor's docs and other multiplexers' detectors quote, not
captures; the tests pin what the adapter does with them and that it never claims idle or
readiness from a screen whose idle form it does not know.
"""

from __future__ import annotations

import shlex

import pytest

from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.agents.cursor import CursorAdapter
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.hosts.local import LocalHost


def _agent(**fields: object) -> ResolvedAgent:
    base: dict[str, object] = dict(
        name="Gauss",
        cli="cursor",
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


def test_launch_runs_agent_with_model_and_args() -> None:
    ctx = LocalHost("s", "f").launch_context()
    adapter = CursorAdapter()
    assert shlex.split(adapter.launch(_agent(), ctx)) == ["agent"]
    assert shlex.split(
        adapter.launch(_agent(model="sonnet-4", args=("--sandbox", "enabled")), ctx)
    ) == ["agent", "--model", "sonnet-4", "--sandbox", "enabled"]
    # the older name, or a path off PATH (the installer puts it in ~/.local/bin)
    assert shlex.split(adapter.launch(_agent(command="cursor-agent"), ctx)) == ["cursor-agent"]


def test_headless_is_print_mode_read_only_and_trusting_the_folder() -> None:
    argv = CursorAdapter().headless("gpt-5")
    assert argv[:2] == ["agent", "-p"]
    assert argv[argv.index("--output-format") + 1] == "text"
    assert argv[argv.index("--mode") + 1] == "ask"  # a judge must not edit the worker's files
    assert "--trust" in argv  # print mode refuses an untrusted folder instead of asking
    assert argv[-2:] == ["--model", "gpt-5"]
    assert "--model" not in CursorAdapter().headless("")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            ["  ⬢ Reading…", "", "  → Add a follow-up", "  ctrl+c to stop"],
            Reading(AgentState.WORKING),
        ),
        (["  ⬡ Grepping..", "  → Add a follow-up"], Reading(AgentState.WORKING)),
        (
            [
                "Run this command?",
                "Not in allowlist: npm run test",
                " → Run (once) (y)",
                "   Run Everything (shift+tab)",
                "   Skip (esc or n)",
            ],
            Reading(AgentState.NEEDS_PERMISSION, None, "Run this command"),
        ),
        (
            ["Allow this web search?", " → Allow search (y)", "   Skip (esc or n)"],
            Reading(AgentState.NEEDS_PERMISSION, None, "Allow this web search"),
        ),
        (["  → Add a follow-up", "  Auto · 12% · 3 files edited"], Reading(None)),
        ([], Reading(None)),
    ],
)
def test_read_reports_only_what_the_documented_strings_say(
    lines: list[str], expected: Reading
) -> None:
    assert CursorAdapter().read(lines) == expected


def test_an_old_busy_line_high_in_the_transcript_is_not_busy() -> None:
    lines = [
        "  ctrl+c to stop",
        *[f"transcript line {i}" for i in range(20)],
        "  → Add a follow-up",
    ]
    assert CursorAdapter().read(lines) == Reading(None)


def test_hook_free_idle_comes_from_quiet_time_and_submission_is_not_verified() -> None:
    adapter = CursorAdapter()
    assert adapter.reads_input_box is False
    assert adapter.hook_state({"hook_event_name": "stop"}) is None
    assert adapter.submitted(["x"], ["y"], "x") is None
    tracker = StateTracker(adapter, started=0.0)
    tracker.screen(adapter.read(["  → Add a follow-up"]))
    tracker.output(1.0)
    assert not tracker.evaluate(1.0 + adapter.idle_quiet / 2)  # output recently: not idle
    assert tracker.evaluate(1.0 + adapter.idle_quiet)
    assert tracker.state is AgentState.IDLE and tracker.ready
    tracker.screen(adapter.read(["  ⬢ Reading…", "ctrl+c to stop"]))
    tracker.evaluate(10.0)
    tracker.evaluate(11.0)
    assert tracker.state is AgentState.WORKING and not tracker.ready
