"""The node set-up's Python (hosts/remote.py BOOT) run here by a real interpreter, as a node's
shell runs it: stdout and stderr one stream until the relay starts, the real stderr on fd 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from swarm_tui.hosts.remote import BOOT

RELAY = 'import json, sys\nprint(json.dumps({"ready": True, "argv": sys.argv[1:]}))\n'


def boot(home: Path, *args: str) -> list[str]:
    payload = {
        "dir": ".cache/swarm/t",
        "tmux": ["tmux"],
        "memo": ["python.n1", "python3"],
        "files": {"relay.py": [RELAY, 0o600], "bin/swarm": ["#!/bin/sh\n", 0o755]},
        "relay": ["~/.cache/swarm/t/swarm.sock", "[]"],
    }
    err = os.open(os.devnull, os.O_WRONLY)
    try:
        out = subprocess.run(
            ["sh", "-c", 'exec 3>&2 2>&1; exec "$0" -c "$1" "$2"', sys.executable, BOOT, *args],
            input=json.dumps(payload) + "\n",
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(home)},
            pass_fds=(err,),
            timeout=30,
        )
    finally:
        os.close(err)
    return out.stdout.splitlines()


def test_boot_writes_the_files_and_becomes_the_relay(tmp_path: Path) -> None:
    lines = boot(tmp_path)
    top = tmp_path / ".cache/swarm/t"
    assert lines[:2] == [f"SWARM-HOME {tmp_path}", "SWARM-FILES-WRITTEN"], lines
    assert json.loads(lines[2]) == {"ready": True, "argv": ["~/.cache/swarm/t/swarm.sock", "[]"]}
    assert oct(top.stat().st_mode & 0o777) == "0o700"
    assert oct((top / "relay.py").stat().st_mode & 0o777) == "0o600"
    assert oct((top / "bin/swarm").stat().st_mode & 0o777) == "0o755"
    memo = top / "python.n1"
    assert memo.read_text() == f"python3\n{sys.executable}\n"
    assert oct(memo.stat().st_mode & 0o777) == "0o600"
    assert not list(top.rglob("*.tmp"))


def test_a_failure_in_the_set_up_is_read_on_stdout(tmp_path: Path) -> None:
    top = tmp_path / ".cache/swarm/t"
    top.parent.mkdir(parents=True)
    top.write_text("a file where swarm's directory goes")
    lines = boot(tmp_path)
    assert lines[0] == f"SWARM-HOME {tmp_path}"
    assert "SWARM-FILES-WRITTEN" not in lines
    assert lines[-1].startswith("FileExistsError"), lines
