"""Nobody passes for another agent on one machine: a process inside an agent's pane is that
agent whatever its environment says (the kernel's peer pid), agents cannot reach tmux
behind swarm's back, and what an agent may do to others is what the layout grants."""

from __future__ import annotations

import json
import sqlite3

import pytest

from swarm_tui.testing import Sandbox, mock_agent, shell_agent, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def fleet(sandbox: Sandbox):
    layout = sandbox.layout(
        "who",
        mock_agent("Cy"),
        mock_agent("Bo"),
        shell_agent("Ada"),
        shell_agent("Pat", may=["focus"]),
        shell_agent("Lu", talks_to=["Cy"], role="intern"),
    )
    proc = sandbox.start_headless(layout)
    proc.wait_ready()
    wait_until(lambda: sandbox.swarm("ls").returncode == 0, 10, "the engine", proc.output)
    yield sandbox.tmux("who")
    proc.interrupt()


def _run_in(tmux, agent: str, command: str, marker) -> str:
    """Type a shell command into an agent's pane; wait for the file it writes."""
    tmux.send_keys(agent, f"{{ {command}; }} > {marker} 2>&1; echo done >> {marker}", literal=True)
    tmux.send_keys(agent, "Enter")
    wait_until(
        lambda: marker.exists() and "done" in marker.read_text(),
        15,
        f"{command!r} to finish in {agent}'s pane",
        lambda: tmux.capture(agent),
    )
    return marker.read_text()


def test_an_agent_without_its_token_is_still_itself(sandbox: Sandbox, fleet, tmp_path):
    out = _run_in(
        fleet, "Ada", 'env -u SWARM_TOKEN swarm send Cy "who am I"', tmp_path / "send.txt"
    )
    assert "to Cy" in out, out
    wait_until(lambda: sandbox.received("Cy"), 15, "Cy to get it")
    assert sandbox.received("Cy") == ["[message from Ada] who am I"]
    (row,) = sandbox.journal("who")
    assert row["sender"] == "Ada"


def test_an_agent_with_another_agents_token_is_still_itself(sandbox: Sandbox, fleet, tmp_path):
    with sqlite3.connect(sandbox.db_path("who")) as db:
        (bo,) = db.execute("SELECT token FROM agents WHERE name='Bo'").fetchone()
    _run_in(fleet, "Ada", f'SWARM_TOKEN={bo} swarm send Cy "borrowed"', tmp_path / "b.txt")
    wait_until(lambda: sandbox.received("Cy"), 15, "Cy to get it")
    assert sandbox.received("Cy") == ["[message from Ada] borrowed"]


def test_an_agent_changes_only_its_own_focus_unless_granted(sandbox: Sandbox, fleet, tmp_path):
    out = _run_in(
        fleet, "Ada", 'env -u SWARM_TOKEN swarm focus Bo "hijacked"; echo rc=$?', tmp_path / "f.txt"
    )
    assert "Ada may not set another agent's focus" in out and "rc=1" in out, out
    _run_in(fleet, "Ada", 'swarm focus "my own"', tmp_path / "own.txt")
    _run_in(fleet, "Pat", 'swarm focus Bo "granted"', tmp_path / "pat.txt")  # may = focus
    agents = {a["name"]: a for a in json.loads(sandbox.swarm("ls", "--json").stdout)}
    assert (agents["Ada"]["focus"], agents["Bo"]["focus"]) == ("my own", "granted")


def test_agents_do_not_get_tmux(fleet, tmp_path):
    out = _run_in(fleet, "Ada", 'echo "TMUX=[$TMUX] PANE=[$TMUX_PANE]"', tmp_path / "t.txt")
    assert "TMUX=[] PANE=[]" in out, out


def test_talks_to_limits_whom_an_agent_may_message(sandbox: Sandbox, fleet, tmp_path):
    out = _run_in(
        fleet,
        "Lu",
        'env -u SWARM_TOKEN swarm send Bo "not allowed"; echo rc=$?',
        tmp_path / "no.txt",
    )
    assert "Lu may not message Bo: its talks_to lists only cy" in out and "rc=1" in out, out
    out = _run_in(fleet, "Lu", 'swarm send --all "to whom I may"; echo rc=$?', tmp_path / "all.txt")
    assert "rc=0" in out and "to Cy" in out and "to Bo" not in out, out
    _run_in(fleet, "Lu", 'swarm send Cy "allowed"', tmp_path / "yes.txt")
    wait_until(lambda: len(sandbox.received("Cy")) == 2, 15, "Cy to get both")
    assert sandbox.received("Cy") == [
        "[message from Lu] to whom I may",
        "[message from Lu] allowed",
    ]
    assert sandbox.received("Bo") == []
    # the human messages anyone, and an agent without talks_to messages Lu
    assert sandbox.swarm("send", "Lu", "echo from-the-human").returncode == 0
    assert [r["recipient"] for r in sandbox.journal("who")] == ["Cy", "Cy", "Lu"]
