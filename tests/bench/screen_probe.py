"""What bench_screen.py measures with: the viewer's terminal (a tmux server with one pane,
sampled by a control-mode client) and process CPU and memory from /proc."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from pathlib import Path

STAMP = re.compile(r"\b(A\d{3,}) T (\d{9,}\.\d{6})\b")  # a printer's line: name, unix time
TICK = os.sysconf("SC_CLK_TCK")


class Failed(Exception):
    """Something did not start: one line, exit 1."""


def tmux(sock: str, *args: str) -> str:
    try:
        r = subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise Failed(f"tmux -L {sock} {' '.join(args[:3])}: no answer within 30 s") from None
    if r.returncode:
        raise Failed(f"tmux -L {sock} {' '.join(args[:3])}: {r.stderr.strip()}")
    return r.stdout


# ---------------------------------------------------------------------------- /proc
def proc_table() -> dict[int, tuple[int, float, float]]:
    """pid -> (ppid, own cpu s, own + reaped children's cpu s)."""
    table = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                f = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            own = (int(f[11]) + int(f[12])) / TICK
            table[int(d)] = (int(f[1]), own, own + (int(f[13]) + int(f[14])) / TICK)
    return table


def tree(table: dict[int, tuple[int, float, float]], root: int) -> set[int]:
    pids, grew = {root} if root in table else set(), True
    while grew:
        more = {p for p, (pp, _, _) in table.items() if pp in pids and p not in pids}
        pids |= more
        grew = bool(more)
    return pids


def rss_mb(pids: set[int]) -> float:
    total = 0
    for p in pids:
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        m = re.search(r"VmRSS:\s+(\d+)", status)
        total += int(m[1]) if m else 0
    return total / 1024


def cpu_snapshot(trees: dict[str, int], servers: dict[str, int]) -> dict[str, float]:
    """CPU seconds: a whole process tree (reaped children included) or one process."""
    t = proc_table()
    out = {k: sum(t[p][2] for p in tree(t, pid)) for k, pid in trees.items()}
    out.update({k: t[pid][1] if pid in t else 0.0 for k, pid in servers.items()})
    return out


# ---------------------------------------------------------------------------- the terminal
class Terminal:
    """The viewer's terminal: a tmux server with one pane, sampled by a control client."""

    def __init__(self, sock: str, width: int, height: int) -> None:
        self.sock, self.buf = sock, b""
        new = f"-f /dev/null new-session -d -s v -x {width} -y {height}".split()
        opts = "set -g status off ; set -g window-size manual ; set -g default-terminal"
        tmux(sock, *new, "sleep 86400", ";", *opts.split(), "tmux-256color")
        self.pid = int(tmux(sock, "display", "-p", "#{pid}"))
        ctl = f"tmux -L {sock} -C attach -t v -f no-output,ignore-size".split()
        self.ctl = subprocess.Popen(ctl, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, command: str) -> int:
        """Replace what runs in the pane; returns the pane's process id."""
        tmux(self.sock, "respawn-pane", "-k", "-t", "v", command)
        return int(tmux(self.sock, "display", "-p", "-t", "v", "#{pane_pid}"))

    def _line(self) -> bytes:
        assert self.ctl.stdout
        fd = self.ctl.stdout.fileno()
        while b"\n" not in self.buf:
            if not select.select([fd], [], [], 10.0)[0]:
                raise Failed("the terminal's tmux server did not answer within 10 s")
            if not (chunk := os.read(fd, 1 << 16)):
                raise Failed("the terminal's tmux server went away")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def capture(self) -> str:
        """The pane's screen, as text."""
        assert self.ctl.stdin
        self.ctl.stdin.write(b"capture-pane -p -t v\n")
        self.ctl.stdin.flush()
        while not ((line := self._line()).startswith(b"%begin") and line.endswith(b" 1")):
            pass  # the answer to attaching, notifications
        lines = []
        while not (line := self._line()).startswith((b"%end ", b"%error ")):
            lines.append(line)
        return b"\n".join(lines).decode(errors="replace")

    def wait_for_stamp(self, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not STAMP.search(self.capture()):
            if time.monotonic() > deadline:
                raise Failed(f"{what} showed no agent line within {timeout:.0f} s")
            time.sleep(0.1)


def kill_server(sock: str) -> None:
    """Kill a tmux server of ours and wait (5 s at most) until it is gone."""
    argv = ["tmux", "-L", sock, "display", "-p", "#{pid}"]
    pid = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True, timeout=10)
    deadline = time.monotonic() + 5
    while pid and Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
