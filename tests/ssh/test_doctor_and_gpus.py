"""`swarm doctor` over SSH nodes, and GPU telemetry read from each node's nvidia-smi."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.store import Store
from swarm_tui.testing.gpus import fake_nvidia_smi
from swarm_tui.testing.ssh_server import SSHCluster
from swarm_tui.ui.sidebar import gpu_summary
from tests.ssh.test_bad_hosts import two_node_layout
from tests.ssh.test_cluster import until

FAKE_SMI = """#!/bin/sh
# a stand-in nvidia-smi: 4 GPUs, as `--query-gpu=... --format=csv,noheader,nounits` prints
case "$*" in
  *name*) printf 'A100\\nA100\\nA100\\nA100\\n' ;;
  *) printf '0, 97, 61000, 81920\\n1, 3, 1024, 81920\\n2, 50, 40000, 81920\\n3, 0, 0, 81920\\n' ;;
esac
"""


async def test_doctor_reports_each_host_on_one_line(
    cluster: SSHCluster, home: Path, tmp_path: Path
) -> None:
    await cluster.add("good")
    await cluster.add("bad")
    layout = two_node_layout(tmp_path, bad_tmux="/nonexistent/tmux")
    env = {**os.environ, "SWARM_SSH_CONFIG": str(cluster.config)}
    proc = await __import__("asyncio").create_subprocess_exec(
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
    lines = out.decode().splitlines()
    assert proc.returncode == 1, (out, err)
    assert len(lines) == 2 and err == b""
    good = next(ln for ln in lines if ln.startswith("good"))
    bad = next(ln for ln in lines if ln.startswith("bad"))
    assert " ok " in good and "tmux 3." in good and "MISSING" not in good
    assert "FAIL" in bad and "tmux not found on the node" in bad


async def test_gpu_utilisation_and_memory_per_node(
    cluster: SSHCluster, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = fake_nvidia_smi(tmp_path, FAKE_SMI)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")  # the nodes' commands see it
    await cluster.add("good")
    await cluster.add("bad")
    store = Store(home / "ssh.sqlite3")
    fleet = Fleet(load_layout(two_node_layout(tmp_path)), store)
    await fleet.start()
    try:
        await until(lambda: fleet.links["good"].gpus, what="GPU readings from node good")
        gpus = fleet.links["good"].gpus or []
        assert [(g.index, g.util, g.mem_used) for g in gpus] == [
            (0, 97, 61000),
            (1, 3, 1024),
            (2, 50, 40000),
            (3, 0, 0),
        ]
        assert gpu_summary(gpus) == "█ ▄  37% 100/320G"
    finally:
        await fleet.down()
        store.close()
