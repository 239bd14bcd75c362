"""The engine as a process of its own: started in the background by `swarm up`, found by
`swarm ps`, stopped by `swarm stop`, read by `swarm logs`.

The engine is `swarm up LAYOUT --headless --log FILE` in a new session (no controlling
terminal: it outlives the terminal, SIGHUP and the SSH session it was started from). Its
output goes to FILE in the state directory, rotated when it grows past LOG_MAX. The terminal
that started it shows its start-up lines until its socket answers, then the UI attaches.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from swarm_tui import paths
from swarm_tui.client import ClientError, NoEngine, request
from swarm_tui.errors import SwarmError

LOG_MAX = 5 * 1024 * 1024  # bytes before the log is rotated (one old file is kept: .1)
LOG_CHECK = 30.0  # seconds between two checks of the log's size
START_WAIT = 180.0  # seconds an engine may take to bring up its hosts


def log_path(fleet: str) -> Path:
    return paths.state_dir() / f"{paths.fleet_slug(fleet)}.log"


def _rotate(path: Path) -> None:
    try:
        if path.stat().st_size > LOG_MAX:
            path.replace(path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass


def log_to(path: Path) -> None:
    """Send this process's stdout and stderr to `path` (0600, appended, rotated first)."""
    _rotate(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


async def keep_log(path: Path) -> None:
    """Rotate the engine's own log while it runs."""
    import asyncio  # the engine's: `swarm send` and `ls` start without it

    while True:
        await asyncio.sleep(LOG_CHECK)
        try:
            if path.stat().st_size > LOG_MAX:
                log_to(path)
        except OSError:
            pass


def ping(sock: Path, timeout: float = 2.0) -> dict[str, Any] | None:
    """The engine's answer on `sock`, or None when none answers."""
    try:
        return request(sock, {"op": "ping"}, timeout=timeout)
    except ClientError:
        return None


def start(layout: Path, fleet: str, fresh: bool, out: Any = sys.stderr) -> int:
    """Start the fleet's engine in the background and wait until it answers, showing its
    start-up lines. Returns 0, or the engine's exit code when it did not come up."""
    log = log_path(fleet)
    _rotate(log)
    offset = log.stat().st_size if log.exists() else 0
    argv = [
        sys.executable,
        "-m",
        "swarm_tui.cli",
        "up",
        str(layout),
        "--headless",
        "--log",
        str(log),
        *(["--fresh"] if fresh else []),
    ]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=os.getcwd(),
    )
    sock = paths.socket_path(fleet)
    deadline = time.monotonic() + START_WAIT
    print(
        f"swarm: starting the engine of fleet {fleet!r} (pid {proc.pid}; its log: {log})",
        file=out,
        flush=True,
    )
    try:
        while True:
            shown = _show_new(log, offset, out)
            if shown != offset:  # it says how it goes (a Slurm job pending): not stuck
                offset, deadline = shown, time.monotonic() + START_WAIT
            if proc.poll() is not None:
                _show_new(log, offset, out)
                return proc.returncode or 1
            if sock.exists() and (reply := ping(sock)) is not None and reply.get("ready"):
                _show_new(log, offset, out)
                return 0
            if time.monotonic() > deadline:
                raise SwarmError(
                    f"the engine of fleet {fleet!r} (pid {proc.pid}) did not "
                    f"come up within {START_WAIT:.0f} s: see {log}"
                )
            time.sleep(0.1)  # polling a child process and a file: no event to wait on
    except KeyboardInterrupt:  # Ctrl-C while it starts: it stops (and cancels its job)
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        _show_new(log, offset, out)
        raise


def _show_new(log: Path, offset: int, out: Any) -> int:
    """Print the start-up lines the engine wrote since `offset`; returns the new offset."""
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return offset
    end = data.rfind(b"\n") + 1
    for line in data[:end].decode(errors="replace").splitlines():
        if line.startswith("swarm:"):
            print(line, file=out, flush=True)
    return offset + end


def running() -> list[tuple[Path, dict[str, Any] | None]]:
    """Every fleet socket in the run directory and its engine's answer (None: not
    answering, a stale socket left by a killed engine)."""
    run = paths.run_dir()
    return [(sock, ping(sock)) for sock in sorted(run.glob("*.sock"))]


def stop(fleet: str | None, timeout: float = 30.0) -> str:
    """Ask the fleet's engine to stop (its agents keep running) and wait until it has."""
    from swarm_tui.client import find_socket

    sock = find_socket(fleet, paths.run_dir())
    reply = ping(sock)
    if reply is None:
        raise NoEngine(f"no engine answers on {sock} (it is not running)")
    request(sock, {"op": "stop"}, timeout=10)
    pid = int(reply["pid"])
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            raise SwarmError(f"the engine (pid {pid}) did not stop within {timeout:.0f} s")
        time.sleep(0.05)  # waiting for another process to exit: no event to wait on
    return (
        f"fleet {reply['fleet']!r}: engine (pid {pid}) stopped; its agents keep running "
        f"(`swarm up {reply.get('layout', 'LAYOUT')}` brings the engine back)"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours is gone for every purpose here
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def uptime(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def show_log(path: Path, lines: int, follow: bool) -> int:
    """The last `lines` lines of the log; with `follow`, then every new line as it comes."""
    with open(path, "rb") as f:
        tail = f.read().splitlines()[-lines:] if lines > 0 else []
        for line in tail:
            print(line.decode(errors="replace"))
        if not follow:
            return 0
        sys.stdout.flush()
        try:
            while True:
                chunk = f.readline()
                if chunk:
                    sys.stdout.write(chunk.decode(errors="replace"))
                    sys.stdout.flush()
                elif path.exists() and path.stat().st_size < f.tell():
                    f.close()  # rotated: follow the new file
                    f = open(path, "rb")  # noqa: SIM115 - replaced in the loop
                else:
                    time.sleep(0.2)  # following a file: there is no event to wait on
        except KeyboardInterrupt:
            return 0
