"""A node's set-up over real OpenSSH is one shell and one Python (which becomes the relay),
the interpreter behind a shim once the node is known.
What the node's tmux server, and so every agent's window, inherits is the shell's: never the
environment a Python shim (pyenv) gives the set-up's Python, never the SSH channel's stderr
(a server holding it would keep the session open after the relay ends).

Needs root, iproute2 and openssh-server; skips elsewhere, fails in CI (CI=true).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarm_tui.config.layout import load_layout
from swarm_tui.errors import HostUnreachable
from swarm_tui.hosts.registry import make_hosts
from swarm_tui.hosts.ssh import SSHHost
from swarm_tui.testing.waiting import wait_until
from tests.ssh.conftest import real_nodes, serving
from tests.ssh.test_cluster import until


def one_node(tmp: Path, fleet: str, python: str) -> Path:
    """A layout: node1 with this `python`, one plain shell agent on it."""
    layout = tmp / f"{fleet}.toml"
    layout.write_text(
        f'name = "{fleet}"\n[hosts.node1]\nssh = "node1"\npython = "{python}"\n'
        '[[agents]]\nname = "Shell"\nhost = "node1"\ncli = "generic"\n'
        'command = "bash --norc --noprofile"\n'
    )
    return layout


def node_host(layout: Path) -> SSHHost:
    host = make_hosts(load_layout(layout))["node1"]
    assert isinstance(host, SSHHost)
    return host


async def test_the_agents_inherit_the_shell_not_the_set_up_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    shim = tmp_path / "python-shim"  # what pyenv's shim does: PATH and a variable, then exec
    shim.write_text('#!/bin/sh\nPATH=/shim-leak/bin:$PATH SWARM_SHIM_LEAK=1 exec python3 "$@"\n')
    shim.chmod(0o755)
    with real_nodes(tmp_path, monkeypatch, "node1"):
        async with serving(one_node(tmp_path, "setup", str(shim)), home) as fleet:
            link = fleet.links["node1"]
            await until(
                lambda: link.connected and bool(fleet.agents["Shell"].pane),
                timeout=60,
                what=f"node1 up ({link.detail})",
            )
            rc, env = await link.host.run("show-environment", "-g")
            assert rc == 0 and "PATH=" in env, env
            assert "SWARM_SHIM_LEAK" not in env and "/shim-leak" not in env, env
            assert "SSH_CLIENT=" not in env, env  # swarm's tmux config was given to it
            rc, pid = await link.host.run("display-message", "-p", "#{pid}")
            assert rc == 0, pid
            fds = {fd.name: os.readlink(fd) for fd in Path(f"/proc/{pid.strip()}/fd").iterdir()}
            # tmux's own pipe has both its ends; one end alone was inherited from its starter
            pipes = [t for t in fds.values() if t.startswith("pipe:")]
            assert all(pipes.count(t) == 2 for t in pipes), fds


async def test_the_interpreter_behind_a_shim_is_remembered_and_forgotten_when_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    starts = tmp_path / "shim-starts"
    shim = tmp_path / "python-shim"  # counts its starts: each costs a node ~90 ms with pyenv
    shim.write_text(f'#!/bin/sh\necho started >> {starts}\nexec python3 "$@"\n')
    shim.chmod(0o755)
    with real_nodes(tmp_path, monkeypatch, "node1") as cluster:
        wait_until(cluster.nodes["node1"].listening, 10, "node1's sshd listening")
        host = node_host(one_node(tmp_path, "memo", str(shim)))

        def shim_starts() -> int:
            return len(starts.read_text().splitlines()) if starts.exists() else 0

        try:
            await host.connect()  # first set-up on the node: through the shim
            assert shim_starts() == 1
            conn = host.transport.conn  # type: ignore[attr-defined]
            assert conn.get_extra_info("send_cipher") == "aes128-gcm@openssh.com"  # not ChaCha
            memo = Path(host.dir) / "python.node1"
            wanted, interpreter = memo.read_text().splitlines()
            assert wanted == str(shim) and Path(interpreter).resolve() != shim.resolve()
            assert oct(memo.stat().st_mode & 0o777) == "0o600"
            await host.connect()  # again (a reconnect): the interpreter behind the shim
            assert shim_starts() == 1 and host.connected
            memo.write_text(f"{shim}\n{tmp_path}/uninstalled/python3\n")  # pyenv uninstall
            await host.connect()
            assert shim_starts() == 2 and host.connected
            assert memo.read_text().splitlines()[1] == interpreter  # learnt again
            memo.write_text(f"python3\n{interpreter}\n")  # the layout's python changed since
            await host.connect()
            assert shim_starts() == 3 and host.connected
        finally:
            await host.kill_server()
            await host.close()


async def test_a_session_left_by_a_failed_set_up_gets_swarms_tmux_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    with real_nodes(tmp_path, monkeypatch, "node1") as cluster:
        wait_until(cluster.nodes["node1"].listening, 10, "node1's sshd listening")
        broken = node_host(one_node(tmp_path, "left", "/nonexistent/python3"))
        fixed = node_host(one_node(tmp_path, "left", "python3"))  # the user fixed `python`
        try:
            with pytest.raises(HostUnreachable, match="cannot run /nonexistent/python3"):
                await broken.connect()  # the shell made the session; no Python came to it
            await fixed.connect()  # the user fixed `python`: the session is found as it was
            rc, mark = await fixed.run("show-options", "-gqv", "@swarm_conf")
            assert (rc, mark.strip()) == (0, "1")
            rc, env = await fixed.run("show-environment", "-g")
            assert rc == 0 and "SSH_CLIENT=" not in env, env
        finally:
            await fixed.kill_server()
            await fixed.close()
            await broken.close()
