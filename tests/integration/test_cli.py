"""The `swarm` CLI as a user and an agent run it: subprocesses talking to a headless swarm
over its real Unix socket. Every error a user can cause is one line on stderr, exit != 0."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess

import pytest

from swarm_tui.testing import Headless, Sandbox, mock_agent, shell_agent, wait_until

pytestmark = pytest.mark.integration


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (fails on tracebacks or chatter)."""
    assert result.returncode != 0, f"expected failure, got 0: {result.stdout!r}"
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1, f"want one line on stderr, got: {result.stderr!r}"
    return lines[0]


def agents_by_name(box: Sandbox, **env: str) -> dict[str, dict]:
    result = box.swarm("ls", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return {a["name"]: a for a in json.loads(result.stdout)}


@pytest.fixture
def headless(sandbox: Sandbox) -> Headless:
    """A headless swarm with two mock agents and one plain shell."""
    layout = sandbox.layout(
        "cli", mock_agent("Alice"), mock_agent("Bob"), shell_agent("Shell", focus="typing commands")
    )
    proc = sandbox.start_headless(layout)
    proc.wait_ready()
    wait_until(
        lambda: (
            {a["state"] for n, a in agents_by_name(sandbox).items() if n != "Shell"} == {"idle"}
        ),
        10,
        "Alice and Bob to be idle",
        proc.output,
    )
    return proc


def test_send_to_unknown_agent_is_one_line_naming_it(sandbox, headless):
    line = one_line_error(sandbox.swarm("send", "Nobody", "hello?"))
    assert "Nobody" in line and line.startswith("swarm: "), line
    # a known and an unknown name together: nothing at all is queued
    one_line_error(sandbox.swarm("send", "Alice", "Nobody", "hello?"))
    assert sandbox.journal("cli") == []


def test_without_a_running_swarm_every_verb_says_so_in_one_line(sandbox):
    for argv in (("send", "Alice", "hi"), ("ls",), ("focus", "Alice", "x"), ("messages",)):
        line = one_line_error(sandbox.swarm(*argv))
        assert "no swarm is running" in line, (argv, line)
    line = one_line_error(sandbox.swarm("ls", "--fleet", "ghost"))
    assert "ghost" in line, line


def test_empty_messages_are_refused_in_one_line(sandbox, headless):
    for text in ("", "   ", "\n\t "):
        line = one_line_error(sandbox.swarm("send", "Alice", text))
        assert "empty message" in line, line
    line = one_line_error(sandbox.swarm("send", "Alice", "-", input=""))
    assert "empty message" in line, line
    # only control characters: the client passes it on, swarm's sanitizer leaves nothing
    line = one_line_error(sandbox.swarm("send", "Alice", "\x01\x02\x1b"))
    assert "empty message" in line, line
    assert sandbox.journal("cli") == []


def test_ls_json_lists_agents_with_states(sandbox, headless):
    agents = agents_by_name(sandbox)
    assert list(agents) == ["Alice", "Bob", "Shell"]
    assert agents["Alice"]["state"] == agents["Bob"]["state"] == "idle"
    assert agents["Shell"]["state"] in ("starting", "working", "idle")
    assert agents["Alice"]["cli"] == "mock" and agents["Shell"]["cli"] == "generic"
    assert agents["Shell"]["focus"] == "typing commands"
    assert agents["Alice"]["context_left"] == 100
    assert all(a["window"].startswith("@") for a in agents.values())
    plain = sandbox.swarm("ls")
    assert plain.returncode == 0 and plain.stdout.splitlines()[0].split()[:4] == [
        "NAME",
        "ROLE",
        "CLI",
        "STATE",
    ], plain.stdout


def test_focus_updates_label_and_history(sandbox, headless):
    result = sandbox.swarm("focus", "bob", "tokenizer", "rewrite")  # names are case-blind
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Bob: tokenizer rewrite"
    assert agents_by_name(sandbox)["Bob"]["focus"] == "tokenizer rewrite"
    db = sqlite3.connect(f"file:{sandbox.db_path('cli')}?mode=ro", uri=True)
    try:
        history = db.execute("SELECT agent, label, by FROM focus_history").fetchall()
        stored = db.execute("SELECT focus FROM agents WHERE name='Bob'").fetchone()
    finally:
        db.close()
    assert history == [("Bob", "tokenizer rewrite", "human")]
    assert stored == ("tokenizer rewrite",)
    one_line_error(sandbox.swarm("focus", "Nobody", "x"))


def test_send_from_an_agents_pane_is_signed_by_that_agent(sandbox, headless):
    tmux = sandbox.tmux("cli")
    tmux.send_keys(
        "Shell", 'swarm send Bob "hi from the shell" && swarm focus "chatting"', literal=True
    )
    tmux.send_keys("Shell", "Enter")
    wait_until(
        lambda: sandbox.received("Bob"),
        15,
        "Bob to receive the message",
        lambda: tmux.capture("Shell") + "\n" + tmux.capture("Bob"),
    )
    assert sandbox.received("Bob") == ["[message from Shell] hi from the shell"]
    (row,) = sandbox.journal("cli")
    assert (row["sender"], row["recipient"], row["text"]) == ("Shell", "Bob", "hi from the shell")
    wait_until(
        lambda: sandbox.journal("cli")[0]["status"] == "delivered",
        10,
        "the journal row to say delivered",
    )
    wait_until(
        lambda: agents_by_name(sandbox)["Shell"]["focus"] == "chatting",
        10,
        "Shell's own `swarm focus` to land",
        lambda: tmux.capture("Shell"),
    )
    listing = sandbox.swarm("messages", "--json")
    assert json.loads(listing.stdout)["graph"] == [["Shell", "Bob", 1]]


def test_invalid_token_is_refused(sandbox, headless):
    for argv in (("ls",), ("send", "Alice", "forged"), ("focus", "Alice", "forged")):
        line = one_line_error(sandbox.swarm(*argv, env={"SWARM_TOKEN": "not-a-token"}))
        assert "SWARM_TOKEN" in line, line
    assert sandbox.journal("cli") == []
    assert agents_by_name(sandbox)["Alice"]["focus"] == ""


def test_a_valid_token_makes_its_agent_the_sender(sandbox, headless):
    db = sqlite3.connect(f"file:{sandbox.db_path('cli')}?mode=ro", uri=True)
    try:
        (token,) = db.execute("SELECT token FROM agents WHERE name='Alice'").fetchone()
    finally:
        db.close()
    result = sandbox.swarm("send", "Bob", "from alice", "--wait", "10", env={"SWARM_TOKEN": token})
    assert result.returncode == 0, result.stderr
    assert sandbox.received("Bob") == ["[message from Alice] from alice"]
    assert sandbox.journal("cli")[0]["sender"] == "Alice"


def test_socket_is_private(sandbox, headless):
    sock = sandbox.socket_path("cli")
    mode = sock.stat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700


def test_fleet_option_reaches_a_fleet_with_a_non_ascii_name(sandbox):
    layout = sandbox.layout("Café", mock_agent("Ada"))
    sandbox.start_headless(layout).wait_ready()
    result = sandbox.swarm("ls", "--json", "--fleet", "Café")
    assert result.returncode == 0, result.stderr
    assert [a["name"] for a in json.loads(result.stdout)] == ["Ada"]


def test_oversized_message_is_refused_in_one_line(sandbox, headless):
    line = one_line_error(sandbox.swarm("send", "Alice", "-", input="x" * (5 * 1024 * 1024)))
    assert line.startswith("swarm: "), line
    assert sandbox.journal("cli") == []


def test_every_layout_problem_in_one_pass_by_agent_name_and_line(sandbox):
    """A duplicate name and an unknown `cli` used to report only the `cli`, as agents[5]."""
    path = sandbox.files / "x.toml"
    path.write_text(
        'name = "x"\n\n[[agents]]\nname = "Gauss"\n\n[[agents]]\nname = "Hilbert"\n'
        'cli = "claude-9000"\n\n[[agents]]\nname = "gauss"\ncolour = "red"\n\n'
        '[[reminders]]\nidle = "20"\ntext = "still there?"\n',
        encoding="utf-8",
    )
    result = sandbox.swarm("up", str(path), "--headless")
    assert result.returncode == 2 and result.stdout == "", result
    assert "Traceback" not in result.stderr, result.stderr
    assert [ln.split(": ")[:3] for ln in result.stderr.splitlines()] == [
        ["swarm", f"{path}:8", "agent 'Hilbert'"],
        ["swarm", f"{path}:11", "agent 'gauss'"],
        ["swarm", f"{path}:12", "agent 'gauss'"],
        ["swarm", f"{path}:15", "reminders[0].idle"],
    ]
    assert "name: duplicate agent name 'gauss'" in result.stderr
    assert '\'20\' has no unit: write "20m" for minutes or "20s" for seconds' in result.stderr
    assert not list(sandbox.home.glob("tmux-*/*")), "a tmux server was started anyway"
