"""A fresh start of an agent on an SSH node: its handoff note goes to swarm's private
directory on that node (beside its socket and client), never into the agent's cwd."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.hosts.ssh import SSHHost
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.testing.waiting import async_wait_until

FAST = (
    '["--work", "0.3", "--startup", "0.2", "--permission-rate", "0", '
    '"--give-up-rate", "0", "--quiet-rate", "0"]'
)


def received(log: Path) -> list[str]:
    return [json.loads(x)["text"] for x in log.read_text().splitlines()] if log.exists() else []


async def test_handoff_note_of_a_remote_agent_stays_out_of_its_cwd(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("n1")
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "main.py").write_text("print('hi')\n")
    log = tmp_path / "Gauss.log"
    layout = tmp_path / "ssh.toml"
    layout.write_text(
        f'name = "ssh"\n[hosts.n1]\nssh = "n1"\n[[agents]]\nname = "Gauss"\n'
        f'cli = "mock"\nhost = "n1"\ncwd = "{work}"\nfocus = "the kernel"\n'
        f'args = {FAST}\nenv = {{ SWARM_MOCK_LOG = "{log}" }}\n'
    )
    store = Store(home / "ssh.sqlite3")
    fleet = Fleet(load_layout(layout), store)
    await fleet.start()
    try:
        gauss = fleet.agents["Gauss"]
        await async_wait_until(lambda: gauss.state is AgentState.IDLE, 20, "Gauss idle")
        fleet.send(["Gauss"], "tune the kernel")
        await async_wait_until(lambda: received(log) == ["tune the kernel"], 20, "the task")
        fleet.fresh("Gauss")
        await async_wait_until(
            lambda: len(received(log)) == 4, 40, "handoff request, /clear and the re-injection"
        )
        _, handoff, _, resume = received(log)
        host = fleet.links["n1"].host
        assert isinstance(host, SSHHost)
        state = Path(host.launch_context().state_dir)
        assert state == Path.home() / ".cache" / "swarm" / host.socket_name
        note = state / "handoff-Gauss.md"
        assert f"to the file {note}:" in handoff
        assert note.read_text().startswith("# Handoff from Gauss")
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert "Handoff from Gauss" in resume and "Your focus: the kernel" in resume
        assert sorted(p.name for p in work.rglob("*")) == ["main.py"]
    finally:
        await fleet.down()
        store.close()
