"""The node relay reads the node's GPUs itself and reports them on its output: no SSH session
(and no login shell on the node) per reading. Run as swarm runs it, a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import swarm_tui
from swarm_tui.hosts.base import GPU_QUERY

RELAY = Path(swarm_tui.__file__).parent / "relay.py"
FAKE_SMI = """#!/bin/sh
case "$*" in *--query-gpu=index,utilization.gpu,memory.used,memory.total*) ;; *) exit 9;; esac
echo "0, 97, 61000, 81920"
echo "1, $(cat "$(dirname "$0")/util"), 1024, 81920"
"""


def _relay(tmp_path: Path, path: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PATH": path}
    return subprocess.Popen(
        [
            sys.executable,
            str(RELAY),
            str(tmp_path / "s.sock"),
            json.dumps(["tmux"]),
            json.dumps({"gpu": list(GPU_QUERY), "every": 0.2}),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )


def _frames(proc: subprocess.Popen[bytes], count: int) -> list[dict[str, object]]:
    assert proc.stdout is not None
    return [json.loads(proc.stdout.readline()) for _ in range(count)]


def test_the_relay_reports_each_reading_of_nvidia_smi(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").write_text(FAKE_SMI)
    (bindir / "nvidia-smi").chmod(0o755)
    (bindir / "util").write_text("3")
    proc = _relay(tmp_path, f"{bindir}:/usr/bin:/bin")
    try:
        ready, first = _frames(proc, 2)
        assert ready == {"ready": True}
        assert first == {"gpus": "0, 97, 61000, 81920\n1, 3, 1024, 81920\n"}
        (bindir / "util").write_text("55")  # a later reading sees the change
        later = ""
        for _ in range(50):
            (frame,) = _frames(proc, 1)
            later = str(frame["gpus"])
            if "1, 55," in later:
                break
        assert "1, 55, 1024" in later
    finally:
        proc.kill()
        proc.wait()


def test_a_node_without_nvidia_smi_says_so_once_and_the_relay_goes_on(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    python_dir = str(Path(sys.executable).parent)
    proc = _relay(tmp_path, f"{empty}:{python_dir}")
    try:
        assert _frames(proc, 2) == [{"ready": True}, {"gpus": None}]
        assert proc.poll() is None  # still serving its socket
        assert proc.stdin is not None
        proc.stdin.close()  # the engine hangs up: the relay ends and removes its socket
        assert proc.wait(timeout=10) == 0
        assert not (tmp_path / "s.sock").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
