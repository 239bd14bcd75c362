"""`swarm doctor`'s failure line names what it tried: the layout's SSH destination and the
user@address:port the SSH config made of it, so a typo or a stale alias shows at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from swarm_tui.testing import wait_until
from swarm_tui.testing.ssh_server import SSHCluster


async def test_doctor_failure_names_the_ssh_target_it_tried(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("good")
    down = await cluster.add("down")
    down.drop()  # nothing listens on its port any more
    layout = tmp_path / "doc.toml"
    layout.write_text(
        'name = "doc"\n[hosts.good]\nssh = "good"\n[hosts.down]\nssh = "down"\n'
        '[hosts.direct]\nssh = "someone@127.0.0.1:9"\n'
        '[[agents]]\nname = "A"\nhost = "good"\n'
        '[[agents]]\nname = "B"\nhost = "down"\n'
        '[[agents]]\nname = "C"\nhost = "direct"\n'
    )
    env = {**os.environ, "SWARM_SSH_CONFIG": str(cluster.config)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "swarm_tui.cli",
        "doctor",
        str(layout),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 1 and err == b"", (out, err)
    lines = {ln.split()[0]: ln for ln in out.decode().splitlines()}
    user = os.environ.get("USER", "root")
    assert " ok " in lines["good"] and "ssh " not in lines["good"]
    assert f"FAIL  ssh down ({user}@127.0.0.1:{down.port}): cannot connect" in lines["down"], lines[
        "down"
    ]
    assert "FAIL  ssh someone@127.0.0.1:9 (someone@127.0.0.1:9): " in lines["direct"], lines[
        "direct"
    ]

    # a check leaves nothing running on the node: no session, no tmux server of its making
    def left() -> str:
        return subprocess.run(
            ["pgrep", "-a", "-f", "swarm-doc-.*-good"], capture_output=True, text=True
        ).stdout

    assert wait_until(lambda: left() == "", 10, "the check's tmux server to end", left)
