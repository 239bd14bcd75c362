"""A node's set-up over real OpenSSH is one shell and one Python (which becomes the relay).
What the node's tmux server, and so every agent's window, inherits is the shell's: never the
environment a Python shim (pyenv) gives the set-up's Python, never the SSH channel's stderr
(a server holding it would keep the session open after the relay ends).

Needs root, iproute2 and openssh-server; skips elsewhere, fails in CI (CI=true).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ssh.conftest import real_nodes, serving
from tests.ssh.test_cluster import until


async def test_the_agents_inherit_the_shell_not_the_set_up_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    shim = tmp_path / "python-shim"  # what pyenv's shim does: PATH and a variable, then exec
    shim.write_text('#!/bin/sh\nPATH=/shim-leak/bin:$PATH SWARM_SHIM_LEAK=1 '
                    'exec python3 "$@"\n')
    shim.chmod(0o755)
    layout = tmp_path / "setup.toml"
    layout.write_text(
        f'name = "setup"\n[hosts.node1]\nssh = "node1"\npython = "{shim}"\n'
        '[[agents]]\nname = "Shell"\nhost = "node1"\ncli = "generic"\n'
        'command = "bash --norc --noprofile"\n')
    with real_nodes(tmp_path, monkeypatch, "node1"):
        async with serving(layout, home) as fleet:
            link = fleet.links["node1"]
            await until(lambda: link.connected and bool(fleet.agents["Shell"].pane),
                        timeout=60, what=f"node1 up ({link.detail})")
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
