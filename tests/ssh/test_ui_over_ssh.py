"""The engine on a head node, the view on a laptop: `swarm ui --ssh HOST` forwards the
engine's socket over a real sshd (a network namespace) and attaches; a cut link is said in
one line and healed by itself, and the engine never notices more than a watcher leaving."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.testing import Sandbox, mock_agent, netns, wait_until
from swarm_tui.testing.sandbox import TmuxServer, swarm_argv


@pytest.fixture
def head(tmp_path: Path) -> Iterator[netns.NetnsCluster]:
    reason = netns.available()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"real-sshd tests cannot run in CI: {reason}")
        pytest.skip(f"real-sshd tests skipped: {reason}")
    cluster = netns.NetnsCluster(tmp_path / "ns")
    try:
        cluster.add("head")
        yield cluster
    finally:
        cluster.close()


def test_the_view_attaches_over_ssh_and_survives_a_cut_link(
    sandbox: Sandbox, head: netns.NetnsCluster
) -> None:
    layout = sandbox.layout("far", mock_agent("Ada"), mock_agent("Bo"))
    engine = sandbox.start_headless(layout)
    engine.wait_ready()
    laptop = TmuxServer(
        f"laptop-{sandbox.home.name}", {**sandbox.env, "SWARM_SSH_CONFIG": str(head.config)}
    )
    sandbox._servers.append(laptop)
    # the laptop has no engine of its own: its SWARM_HOME is elsewhere
    command = (
        f"SWARM_HOME={sandbox.home}/laptop "
        + " ".join(swarm_argv())
        + f" ui far --ssh head --remote-home {sandbox.home}; sleep 3600"
    )
    subprocess.run(
        [
            "tmux",
            "-L",
            laptop.socket_name,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "v",
            "-x",
            "150",
            "-y",
            "40",
            command,
        ],
        env=laptop.env,
        check=True,
        timeout=10,
    )

    def view() -> str:
        return laptop.run("capture-pane", "-p", "-t", "v").stdout

    wait_until(lambda: "page 1/1 · 2 agents" in view(), 60, "the view over SSH", view)
    wait_until(lambda: "1 watcher" in sandbox.swarm("ps").stdout, 10, "the engine to count it")
    head.nodes["head"].cut()
    wait_until(lambda: "engine unreachable" in view(), 45, "the view to say the link is down", view)
    assert engine.proc.poll() is None and "Ada" in sandbox.swarm("ls").stdout
    head.nodes["head"].restore()
    wait_until(lambda: "engine unreachable" not in view(), 60, "the view to come back", view)
    wait_until(
        lambda: "1 watcher" in sandbox.swarm("ps").stdout,
        15,
        "one watcher again (the dead one dropped)",
        lambda: sandbox.swarm("ps").stdout,
    )
    assert "page 1/1 · 2 agents" in view()


def test_a_fleet_not_running_there_is_one_line(sandbox: Sandbox, head: netns.NetnsCluster) -> None:
    tmp = sandbox.files / "tmp"
    tmp.mkdir()
    result = sandbox.swarm(
        "ui",
        "nope",
        "--ssh",
        "head",
        "--remote-home",
        str(sandbox.home),
        env={"SWARM_SSH_CONFIG": str(head.config), "TMPDIR": str(tmp)},
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "swarm: head: no swarm engine runs fleet 'nope' there (running: none)"
    )
    assert list(tmp.iterdir()) == [], "the tunnel's directory was left behind"
