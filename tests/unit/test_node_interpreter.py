"""Which Python a node's set-up runs (hosts/remote.py), run by a real `sh` as a node's login
shell runs it: a shim (pyenv, asdf: a script that finds the interpreter, ~90 ms of a node's
CPU per start) is passed over for the default `python3`, and an interpreter that cannot run
BOOT hands it to the configured one before BOOT has read anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from swarm_tui.config.hosts import HostSpec
from swarm_tui.hosts.remote import RemoteHost

TOP = ".cache/swarm/t"


def host(python: str = "python3") -> RemoteHost:
    return RemoteHost("n1", HostSpec(ssh="n1", python=python), "t", "s", None)  # type: ignore[arg-type]


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def chosen(home: Path, path: str, python: str = "python3") -> str:
    """$p after the set-up's interpreter lines, with this PATH."""
    out = subprocess.run(
        ["/bin/sh", "-c", host(python)._interpreter(TOP) + 'echo "$p"'],
        env={"HOME": str(home), "PATH": path},
        capture_output=True,
        text=True,
        timeout=30,
    )
    return out.stdout.strip()


def test_the_default_python3_passes_over_a_shim_for_the_program_behind_it(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    script(shims / "python3", 'exec python3 "$@"\n')  # what pyenv puts first on PATH
    real = tmp_path / "bin" / "python3"
    real.parent.mkdir()
    real.symlink_to(sys.executable)  # a program, not a script
    path = f"{shims}:{tmp_path / 'empty'}:{real.parent}:/usr/bin:/bin"
    assert chosen(tmp_path, path) == str(real)
    # a python the user named is theirs to choose: it is run as named
    assert chosen(tmp_path, path, python=str(shims / "python3")) == ""
    # nothing but shims: none chosen here; the configured one runs (below)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "head").symlink_to("/usr/bin/head")
    assert chosen(tmp_path, f"{shims}:{tools}") == ""


def test_the_interpreter_remembered_for_the_node_comes_first(tmp_path: Path) -> None:
    memo = tmp_path / TOP / host()._memo
    memo.parent.mkdir(parents=True)
    memo.write_text(f"python3\n{sys.executable}\n")
    assert chosen(tmp_path, "/usr/bin:/bin") == sys.executable
    memo.write_text(f"python3\n{tmp_path}/uninstalled/python3\n")  # gone since
    assert chosen(tmp_path, f"{Path(sys.executable).parent}:/bin") != f"{tmp_path}/uninstalled"


def boot(home: Path, p: str, configured: str) -> tuple[int, list[str]]:
    """The set-up's last command with $p set, BOOT reading a payload as the engine sends it."""
    payload = {
        "dir": TOP,
        "tmux": ["tmux"],
        "memo": ["python.n1", configured],
        "files": {"relay.py": ['print("RELAY RAN")\n', 0o600]},
        "relay": [],
    }
    done = subprocess.run(
        ["sh", "-c", f"p={p}; made=; exec 3>&2 2>&1; " + host(configured)._boot()],
        input=json.dumps(payload) + "\n",
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.returncode, done.stdout.splitlines()


def test_an_interpreter_too_old_or_gone_hands_boot_to_the_configured_one(tmp_path: Path) -> None:
    started = tmp_path / "configured-started"
    configured = script(
        tmp_path / "configured" / "python3", f'echo x >> {started}\nexec {sys.executable} "$@"\n'
    )
    old = script(tmp_path / "old" / "python3", "exit 86\n")  # BOOT's word: older than 3.8
    for p in (str(old), str(tmp_path / "gone" / "python3")):
        started.unlink(missing_ok=True)
        rc, lines = boot(tmp_path, p, str(configured))
        # (the shell's "not found" comes first for the one gone: read by the engine, harmless)
        assert rc == 0 and lines[-3:] == [
            f"SWARM-HOME {tmp_path}",
            "SWARM-FILES-WRITTEN",
            "RELAY RAN",  # the payload reached BOOT whole
        ], lines
        assert started.read_text() == "x\n"


def test_a_boot_that_fails_is_not_run_twice(tmp_path: Path) -> None:
    (tmp_path / ".cache").write_text("a file where swarm's directory goes")
    started = tmp_path / "configured-started"
    configured = script(
        tmp_path / "configured" / "python3", f'echo x >> {started}\nexec {sys.executable} "$@"\n'
    )
    rc, lines = boot(tmp_path, sys.executable, str(configured))
    assert rc != 0 and lines[0] == f"SWARM-HOME {tmp_path}"
    assert sum(ln.startswith("SWARM-HOME") for ln in lines) == 1, lines
    assert not started.exists()
