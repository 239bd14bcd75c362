"""A worktree per agent on a real sshd node (a network namespace): made on the node through
its one-off command channel before the agent's window, read as a diff, merged into the base
on the node, and a repo the node lacks refused before anything starts."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.errors import ConfigError
from swarm_tui.paths import tmux_socket_name
from swarm_tui.testing import netns
from swarm_tui.testing.waiting import async_wait_until
from tests.ssh.conftest import real_nodes, serving
from tests.ssh.test_cluster import FAST


@pytest.fixture
def node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[netns.NetnsCluster]:
    with real_nodes(tmp_path, monkeypatch, "node1") as cluster:
        yield cluster


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def layout(tmp_path: Path, fleet: str, repo: Path) -> Path:
    path = tmp_path / f"{fleet}.toml"
    path.write_text(
        f'name = "{fleet}"\n[defaults]\ncli = "mock"\n[hosts.node1]\nssh = "node1"\n'
        f'[[agents]]\nname = "Gauss"\nhost = "node1"\nargs = {FAST}\n'
        f'worktree = true\nrepo = "{repo}"\n'
    )
    return path


@pytest.fixture
def fleet_name() -> Iterator[str]:
    """A fleet name of this test; its worktrees on the node (the node's home: the same file
    system here) are removed after."""
    name = f"wtssh{os.getpid()}"
    yield name
    shutil.rmtree(Path.home() / ".local/state/swarm/worktrees" / name, ignore_errors=True)


async def test_worktree_on_a_node_diff_and_merge(node, home, tmp_path, fleet_name) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.invalid")
    git(repo, "config", "user.name", "Dev")
    (repo / "app.py").write_text("print('hello')\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    async with serving(layout(tmp_path, fleet_name, repo), home) as fleet:
        gauss = fleet.agents["Gauss"]
        wt = Path(gauss.workdir)
        # made on the node, in swarm's state directory there (the node's home)
        assert wt == Path.home() / ".local/state/swarm/worktrees" / fleet_name / "Gauss"
        assert git(wt, "symbolic-ref", "--short", "HEAD").strip() == f"swarm/{fleet_name}/Gauss"
        (wt / "app.py").write_text("print('hello, node')\n")
        git(wt, "commit", "-q", "-am", "greet the node")
        view = await fleet.worktrees.read(gauss)
        assert [(f.path, f.added, f.deleted) for f in view.files] == [("app.py", 1, 1)]
        assert view.host == "node1" and "+print('hello, node')" in view.committed
        done = await fleet.worktrees.merge(gauss)
        assert done.startswith(f"merged swarm/{fleet_name}/Gauss into main")
        assert (repo / "app.py").read_text() == "print('hello, node')\n"


async def test_repo_missing_on_the_node_starts_nothing(node, home, tmp_path, fleet_name) -> None:
    """Refused at start when the node answers then; a node that answers only later (sshd
    still starting) says the same as its link's state, and starts nothing either."""
    try:
        async with serving(layout(tmp_path, fleet_name, tmp_path / "nowhere"), home) as fleet:
            link = fleet.links["node1"]
            await async_wait_until(
                lambda: "not a git repository" in link.detail,
                60,
                "the worktree problem as the node's link state",
            )
            line = link.detail
            assert not link.connected and not fleet.agents["Gauss"].pane
    except ConfigError as exc:
        line = str(exc)
    assert line.startswith("agent 'Gauss' on node1: repo ") and "is not a git repository" in line
    assert "no agent was started" in line
    # nor is an empty session left on the node (its set-up made one to start agents in)
    socket = f"{tmux_socket_name(fleet_name)}-node1"
    sessions = subprocess.run(
        ["tmux", "-L", socket, "list-sessions"], capture_output=True, text=True
    )
    assert sessions.returncode != 0 or not sessions.stdout.strip(), sessions.stdout
