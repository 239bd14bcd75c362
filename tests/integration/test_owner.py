"""`swarm up` / `swarm down` as the fleet's owner: stopping agents, and the errors a user meets
first (a broken layout, no tmux) — each a few clear lines, never a traceback."""

from __future__ import annotations

import os
import shutil

import pytest

from swarm_tui.testing import mock_agent, wait_until

pytestmark = pytest.mark.integration


def test_down_stops_agents_and_the_headless_owner_exits(sandbox):
    layout = sandbox.layout("gone", mock_agent("Ada"), mock_agent("Bo"))
    tmux = sandbox.tmux("gone")
    owner = sandbox.start_headless(layout)
    owner.wait_ready()
    panes = [w.pid for w in tmux.windows() if w.agent]
    assert len(panes) == 2 and tmux.has_session("gone")

    down = sandbox.swarm("down", str(layout))
    assert (down.returncode, down.stderr) == (0, ""), down
    (said,) = down.stdout.splitlines()
    assert "'gone'" in said and said.endswith("stopped"), said
    assert not tmux.alive(), "the fleet's tmux server is still running"
    wait_until(lambda: not any(_running(pid) for pid in panes), 5, "the agents' processes to exit")

    assert owner.wait(10) == 0, owner.output()
    said = [
        ln for ln in owner.stdout().splitlines() if ln.startswith("swarm: fleet 'gone' stopped")
    ]
    assert said, f"the owner did not say why it exited\n{owner.output()}"
    assert owner.stderr() == ""
    assert not sandbox.socket_path("gone").exists()

    again = sandbox.swarm("down", str(layout))
    assert again.returncode == 0 and again.stdout.strip().endswith("was not running"), again


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie awaiting its reaper has exited too
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


BAD_FIELDS = """\
name = "bad"

[[agents]]
name = "9lives"
cli = "claude-nope"
nmae = "typo"
"""

CASES = {
    "fields": (BAD_FIELDS, ["agent '9lives': name", "agent '9lives': cli", "agent '9lives': nmae"]),
    "generic": ('[[agents]]\nname = "Sh"\ncli = "generic"\n', ["agent 'Sh': command"]),
    "duplicate": ('[[agents]]\nname = "Ada"\n[[agents]]\nname = "ada"\n', ["agent 'ada': name"]),
    "no-agents": ('name = "empty"\nagents = []\n', ["agents"]),
    "not-toml": ("name = \n[[agents]\n", ["not valid TOML"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("verb", ["up", "down"])
def test_invalid_layout_exits_2_naming_file_and_field(sandbox, case, verb):
    text, fields = CASES[case]
    path = sandbox.files / f"{case}.toml"
    path.write_text(text, encoding="utf-8")
    result = sandbox.swarm(verb, str(path), *(["--headless"] if verb == "up" else []))
    assert result.returncode == 2, result
    assert result.stdout == "" and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(fields), lines
    for line, field in zip(lines, fields, strict=True):
        assert str(path) in line and field in line, (line, field)
    assert not list(sandbox.home.glob("tmux-*/*")), "a tmux server was started anyway"


def test_missing_layout_file_is_one_line(sandbox):
    result = sandbox.swarm("up", str(sandbox.files / "nope.toml"), "--headless")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"swarm: {sandbox.files / 'nope.toml'}: no such layout file"
    ]


@pytest.mark.parametrize(
    "argv",
    [("up", "{layout}", "--headless"), ("down", "{layout}"), ("attach", "Ada", "--fleet", "x")],
)
def test_without_tmux_on_path_one_clear_line(sandbox, argv):
    layout = sandbox.layout("notmux", mock_agent("Ada"))
    empty = sandbox.files / "bin"
    empty.mkdir()
    assert shutil.which("tmux", path=str(empty)) is None
    result = sandbox.swarm(*(a.format(layout=layout) for a in argv), env={"PATH": str(empty)})
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = (result.stdout + result.stderr).strip().splitlines()
    assert line.startswith("swarm: ") and "'tmux' not found on PATH: install tmux" in line, line
    assert not sandbox.socket_path("notmux").exists()
