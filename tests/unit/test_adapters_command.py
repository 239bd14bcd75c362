"""A layout's `command` names the executable for every CLI adapter (a CLI installed off PATH),
and `swarm doctor` checks that executable rather than the CLI's usual name."""

from __future__ import annotations

import shlex

import pytest

from swarm_tui.agents.base import command_line
from swarm_tui.agents.registry import ADAPTERS, adapter_for
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.fleet.doctor import programs
from swarm_tui.hosts.base import LaunchContext

CTX = LaunchContext(
    python="python3",
    mock_agent="python3 -m swarm_tui.agents.mock",
    bin_dir="/opt/sw/bin",
    socket="/tmp/s.sock",
)
# every adapter that runs a CLI of its own (the mock runs Python, generic runs `command`)
CLIS = sorted(set(ADAPTERS) - {"mock", "generic"})
USUAL = {
    "claude": "claude",
    "codex": "codex",
    "cursor": "agent",
    "gemini": "gemini",
    "aider": "aider",
    "opencode": "opencode",
    "copilot": "copilot",
}


def _agent(cli: str, **fields: object) -> ResolvedAgent:
    base = dict(
        name="Ada",
        index=0,
        cli=cli,
        model="",
        role="worker",
        focus="",
        prompt="",
        command="",
        args=(),
        env={},
        cwd="",
        host="local",
    )
    return ResolvedAgent(**{**base, **fields})  # type: ignore[arg-type]


def test_every_cli_adapter_is_covered() -> None:
    assert sorted(USUAL) == CLIS


@pytest.mark.parametrize("cli", CLIS)
def test_launch_runs_the_usual_name_without_a_command(cli: str) -> None:
    words = shlex.split(adapter_for(cli).launch(_agent(cli, model="m1", args=("--x",)), CTX))
    assert words[0] == USUAL[cli]
    assert "m1" in words and words[-1] == "--x"


@pytest.mark.parametrize("cli", CLIS)
def test_launch_runs_the_layouts_command(cli: str) -> None:
    agent = _agent(
        cli, command="'/opt/my tools/bin/the-cli' --profile work", model="m1", args=("--x",)
    )
    words = shlex.split(adapter_for(cli).launch(agent, CTX))
    assert words[:3] == ["/opt/my tools/bin/the-cli", "--profile", "work"]
    assert USUAL[cli] not in words[3:]  # the usual name is replaced, not added
    assert "m1" in words and words[-1] == "--x"


@pytest.mark.parametrize("cli", CLIS)
def test_a_home_relative_command_is_expanded_by_the_agents_shell(cli: str) -> None:
    line = adapter_for(cli).launch(_agent(cli, command="~/.local/bin/tool"), CTX)
    assert line.startswith("~/.local/bin/tool")  # unquoted: the shell expands `~`


def test_command_line_quotes_every_word_but_a_leading_home() -> None:
    assert (
        command_line(["~/bin/a b", "~/x", "it's", "-", "~"]) == "~/'bin/a b' ~/x 'it'\"'\"'s' - '~'"
    )
    assert shlex.split(command_line(["claude", "--settings", '{"a": 1}'])) == [
        "claude",
        "--settings",
        '{"a": 1}',
    ]


def test_doctor_checks_the_layouts_executable_on_the_agents_path() -> None:
    agents = [
        _agent("claude", command="/opt/claude/bin/claude"),
        _agent("codex"),
        _agent("codex", env={"PATH": "/opt/codex/bin:/usr/bin"}),
        _agent("cursor"),
        _agent("gemini", command="~/bin/gemini --proxy x"),
        _agent("generic", command="python3 -m http.server"),
        _agent("mock"),
    ]
    assert programs(agents, "python3") == [
        ("python3", ""),
        ("/opt/claude/bin/claude", ""),
        ("codex", ""),
        ("codex", "/opt/codex/bin:/usr/bin"),
        ("agent", ""),
        ("~/bin/gemini", ""),
    ]


@pytest.mark.parametrize("cli", ["codex"])
def test_the_state_directory_is_open_to_clis_that_fence_their_files(cli: str) -> None:
    """A fresh start asks the agent to write its handoff note into swarm's state directory,
    outside its working directory: Codex's sandbox must let it write there. (Not Claude
    Code: `--add-dir` makes it ask at every start whether to trust the directory.)"""
    ctx = LaunchContext(
        python="python3",
        mock_agent="m",
        bin_dir="/opt/sw/bin",
        socket="/tmp/s.sock",
        state_dir="/var/sw/fleets/demo",
    )
    words = shlex.split(adapter_for(cli).launch(_agent(cli), ctx))
    assert words[words.index("--add-dir") + 1] == "/var/sw/fleets/demo"
    assert "--add-dir" not in shlex.split(adapter_for(cli).launch(_agent(cli), CTX))
