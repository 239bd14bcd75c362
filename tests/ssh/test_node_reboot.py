"""A node comes back without its tmux server (a reboot, the OOM killer, `tmux kill-server`)
while the engine runs: its agents are started again in new windows, swarm says so, and each
is told its prompt, focus, open task (tests/unit/test_comeback.py) and last handoff note
before anything queued for it meanwhile, which is typed after, once. The agent on the other
node is not disturbed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.hosts.ssh import SSHHost
from swarm_tui.testing.notices import Notices
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.testing.waiting import async_wait_until
from tests.ssh.test_fresh_files import FAST

PROMPT = "You are Gauss: tune the kernel."


def received(log: Path) -> list[str]:
    return [json.loads(x)["text"] for x in log.read_text().splitlines()] if log.exists() else []


def agent(name: str, host: str, log: Path, extra: str = "") -> str:
    return (
        f'[[agents]]\nname = "{name}"\ncli = "mock"\nhost = "{host}"\nargs = {FAST}\n'
        f'env = {{ SWARM_MOCK_LOG = "{log}" }}\n{extra}'
    )


async def test_a_node_without_its_tmux_server_gets_its_agents_back(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("n1")
    await cluster.add("n2")
    gauss_log, noether_log = tmp_path / "Gauss.log", tmp_path / "Noether.log"
    layout = tmp_path / "ssh.toml"
    layout.write_text(
        'name = "ssh"\n[hosts.n1]\nssh = "n1"\n[hosts.n2]\nssh = "n2"\n'
        + agent("Gauss", "n1", gauss_log, f'focus = "the kernel"\nprompt = "{PROMPT}"\n')
        + agent("Noether", "n2", noether_log)
    )
    store = Store(home / "ssh.sqlite3")
    notices = Notices()
    fleet = Fleet(load_layout(layout), store, notices)
    await fleet.start()
    try:
        gauss, noether = fleet.agents["Gauss"], fleet.agents["Noether"]
        await async_wait_until(lambda: received(gauss_log) == [PROMPT], 30, "the prompt")
        await async_wait_until(lambda: gauss.state is AgentState.IDLE, 20, "Gauss idle")
        host = fleet.links["n1"].host
        assert isinstance(host, SSHHost)
        state = Path(host.launch_context().state_dir)
        (state / "handoff-Gauss.md").write_text("# Handoff from Gauss\nblock size 64 is best\n")
        noether_window = noether.window
        killed = subprocess.run(
            ["tmux", "-L", host.socket_name, "kill-server"], capture_output=True, text=True
        )
        assert killed.returncode == 0, killed.stderr  # the reboot
        await async_wait_until(lambda: not fleet.links["n1"].connected, 20, "n1's link down")
        fleet.send(["Gauss"], "meanwhile: the benchmark moved to bench/")
        await async_wait_until(
            lambda: len(received(gauss_log)) >= 4,
            60,
            "the prompt, the fresh start and the queued message",
            lambda: (
                f"{received(gauss_log)!r}\n"
                + "\n".join(
                    f"#{m.id} {m.status} {m.detail} {m.text[:30]!r}" for m in store.messages(50)
                )
            ),
        )
        first, prompt, told, queued = received(gauss_log)[:4]
        assert (first, prompt, queued) == (
            PROMPT,
            PROMPT,
            "meanwhile: the benchmark moved to bench/",
        )
        assert told.startswith("Fresh start: your CLI was started again on n1")
        assert "Your focus: the kernel" in told
        assert "You have no open task." in told
        assert "block size 64 is best" in told  # its last handoff note
        said = [n for n in notices.lines if "started again on n1" in n]
        assert len(said) == 1 and "Gauss started anew" in said[0], notices.lines
        assert noether.window == noether_window and received(noether_log) == []
        assert len(received(gauss_log)) == 4  # nothing typed twice
    finally:
        await fleet.down()
        store.close()
