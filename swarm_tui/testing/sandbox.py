"""A private world for one test: its own SWARM_HOME, tmux server, layouts, logs and processes.

Everything a test starts lives under a short directory in /tmp (Unix socket paths are limited
to ~107 bytes): swarm's state and run dirs (`SWARM_HOME`) and tmux's socket dir
(`TMUX_TMPDIR`), so a test can never reach the user's tmux server or real state. `cleanup()`
kills the tmux servers found there and every process the sandbox started, by pid.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm_tui.testing.waiting import wait_until

# A mock agent that is quick and predictable: no permission prompts, never gives up or goes
# quiet, ready 0.3 s after start, about half a second of "work" per message.
FAST_MOCK_ARGS = (
    "--work",
    "0.5",
    "--startup",
    "0.3",
    "--permission-rate",
    "0",
    "--give-up-rate",
    "0",
    "--quiet-rate",
    "0",
)

# Variables that would make a test talk to a real fleet or a real tmux server.
LEAKY_ENV = (
    "TMUX",
    "TMUX_PANE",
    "SWARM_TOKEN",
    "SWARM_SOCKET",
    "SWARM_AGENT",
    "SWARM_FLEET",
    "SWARM_MOCK_LOG",
    "SWARM_MOCK_RAW_LOG",
)


def swarm_argv() -> list[str]:
    """The installed `swarm` console script next to this Python, else `python -m`."""
    script = Path(sys.executable).parent / "swarm"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "swarm_tui.cli"]


def _toml(value: Any) -> str:
    """A TOML value: JSON's string escapes (with ensure_ascii) are valid TOML escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def mock_agent(name: str, *extra_args: str, **fields: Any) -> dict[str, Any]:
    """A fast mock agent; `extra_args` come last, so they override FAST_MOCK_ARGS."""
    return {"name": name, "cli": "mock", "args": [*FAST_MOCK_ARGS, *extra_args], **fields}


def shell_agent(
    name: str, command: str = "bash --norc --noprofile", **fields: Any
) -> dict[str, Any]:
    """A plain shell in an agent's window: type commands into it as the agent would."""
    return {"name": name, "cli": "generic", "command": command, **fields}


def _stop_agents(tmux: list[str], env: dict[str, str]) -> None:
    """SIGTERM to every pane's process group: some CLIs (Gemini's relaunched node) ignore
    the SIGHUP of a bare kill-server and would outlive the test."""
    from swarm_tui.hosts.base import PANE_PIDS, stop_panes_command

    panes = subprocess.run([*tmux, *PANE_PIDS], env=env, capture_output=True, text=True, timeout=10)
    if panes.returncode == 0:
        subprocess.run(stop_panes_command(panes.stdout), shell=True, check=False, timeout=10)


@dataclass(frozen=True)
class Window:
    window: str
    pane: str
    agent: str
    dead: bool
    pid: int


class TmuxServer:
    """The fleet's private tmux server, driven with plain `tmux -L` subprocesses."""

    def __init__(self, socket_name: str, env: dict[str, str]):
        self.socket_name = socket_name
        self.env = env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        # no -f: these commands never start a server (they fail if there is none)
        proc = subprocess.run(
            ["tmux", "-L", self.socket_name, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc

    def alive(self) -> bool:
        return self.run("list-sessions", check=False).returncode == 0

    def has_session(self, session: str) -> bool:
        return self.run("has-session", "-t", f"={session}", check=False).returncode == 0

    def windows(self) -> list[Window]:
        """Every window of the server, agents and swarm's own placeholder alike."""
        out = self.run(
            "list-windows",
            "-a",
            "-F",
            "#{window_id}\t#{pane_id}\t#{@swarm_agent}\t#{pane_dead}\t#{pane_pid}",
        )
        rows = []
        for line in out.stdout.splitlines():
            w, p, agent, dead, pid = line.split("\t")
            rows.append(Window(w, p, agent, dead == "1", int(pid or 0)))
        return rows

    def agent_windows(self) -> dict[str, Window]:
        return {w.agent: w for w in self.windows() if w.agent}

    def pane(self, agent: str) -> str:
        return self.agent_windows()[agent].pane

    def window_size(self, agent: str) -> str:
        """The agent's window size as tmux has it: `COLSxROWS`."""
        window = self.agent_windows()[agent].window
        return self.run(
            "display-message", "-p", "-t", window, "#{window_width}x#{window_height}"
        ).stdout.strip()

    def capture(self, agent: str) -> str:
        return self.run("capture-pane", "-p", "-t", self.pane(agent)).stdout

    def send_keys(self, agent: str, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.pane(agent), *(["-l"] if literal else []), *keys)

    def kill(self) -> None:
        """Stop the agents, then the server."""
        _stop_agents(["tmux", "-L", self.socket_name], self.env)
        self.run("kill-server", check=False)


@dataclass
class Headless:
    """A `swarm up LAYOUT --headless` process: its output goes to files we can re-read."""

    proc: subprocess.Popen[bytes]
    out_path: Path
    err_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stdout(self) -> str:
        return self.out_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def output(self) -> str:
        return f"--- stdout\n{self.stdout()}--- stderr\n{self.stderr()}"

    def wait_for_line(self, text: str, timeout: float = 10.0) -> str:
        """The first stdout line holding `text`; fails early if the process exits first."""

        def found() -> str | None:
            for line in self.stdout().splitlines():
                if text in line:
                    return line
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"swarm exited ({self.proc.returncode}) before printing "
                    f"{text!r}\n{self.output()}"
                )
            return None

        line = wait_until(found, timeout, f"swarm to print {text!r}", self.output)
        assert line is not None  # wait_until returns only a truthy value
        return line

    def wait_ready(self, timeout: float = 10.0) -> str:
        return self.wait_for_line("running headless", timeout)

    def interrupt(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)

    def wait(self, timeout: float = 10.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"swarm pid {self.pid} did not exit within {timeout} s\n" + self.output()
            ) from None


@dataclass
class Sandbox:
    """One test's SWARM_HOME and everything under it."""

    home: Path
    files: Path  # layouts and mock logs (may be long: no sockets live here)
    env: dict[str, str] = field(default_factory=dict)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _servers: list[TmuxServer] = field(default_factory=list)

    @classmethod
    def create(cls, files: Path) -> Sandbox:
        home = Path(tempfile.mkdtemp(prefix="sw-", dir="/tmp"))
        env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
        env.update(SWARM_HOME=str(home), TMUX_TMPDIR=str(home), PYTHONUNBUFFERED="1")
        return cls(home=home, files=files, env=env)

    # ------------------------------------------------------------------ layouts and logs
    def log_path(self, agent: str) -> Path:
        return self.files / f"{agent}.log"

    def layout(self, fleet: str, *agents: dict[str, Any], **top: Any) -> Path:
        """Write a layout TOML; each mock agent logs what it receives to `log_path(name)`."""
        lines = [f"name = {_toml(fleet)}"]
        lines += [f"{k} = {_toml(v)}" for k, v in top.items()]
        for spec in agents:
            spec = dict(spec)
            if spec.get("cli", "mock") == "mock":
                env = {
                    "SWARM_MOCK_LOG": str(self.log_path(spec["name"])),
                    "SWARM_MOCK_RAW_LOG": str(self.raw_log_path(spec["name"])),
                    **spec.get("env", {}),
                }
                spec["env"] = env
            lines.append("\n[[agents]]")
            lines += [f"{k} = {_toml(v)}" for k, v in spec.items()]
        path = self.files / f"{fleet}.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def raw_log_path(self, agent: str) -> Path:
        return self.files / f"{agent}.raw.log"

    def raw_received(self, agent: str) -> bytes:
        """Every byte the mock agent `agent` has read from its terminal, in order."""
        path = self.raw_log_path(agent)
        return path.read_bytes() if path.exists() else b""

    def received(self, agent: str) -> list[str]:
        """Every message the mock agent `agent` has submitted, in order."""
        path = self.log_path(agent)
        if not path.exists():
            return []
        return [
            json.loads(line)["text"]
            for line in path.read_text(encoding="utf-8").splitlines()
            if line
        ]

    def received_at(self, agent: str) -> list[tuple[float, str]]:
        path = self.log_path(agent)
        if not path.exists():
            return []
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [(r["time"], r["text"]) for r in rows]

    # ------------------------------------------------------------------ tmux and journal
    def tmux(self, fleet: str) -> TmuxServer:
        """The fleet's tmux server, under the socket name swarm itself computes."""
        from swarm_tui import paths

        old = os.environ.get("SWARM_HOME")
        os.environ["SWARM_HOME"] = str(self.home)
        try:
            name = paths.tmux_socket_name(fleet)
        finally:
            if old is None:
                del os.environ["SWARM_HOME"]
            else:
                os.environ["SWARM_HOME"] = old
        server = TmuxServer(name, self.env)
        self._servers.append(server)
        return server

    def db_path(self, fleet: str) -> Path:
        from swarm_tui.paths import fleet_slug

        return self.home / f"{fleet_slug(fleet)}.sqlite3"

    def journal(self, fleet: str) -> list[dict[str, Any]]:
        """The message journal as the SQLite file holds it (read-only, a fresh connection)."""
        uri = f"file:{self.db_path(fleet)}?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=5)
        try:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM messages ORDER BY id")]
        finally:
            db.close()

    def socket_path(self, fleet: str) -> Path:
        from swarm_tui.paths import fleet_slug

        return self.home / "run" / f"{fleet_slug(fleet)}.sock"

    # ------------------------------------------------------------------ the swarm CLI
    def swarm(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 30.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run `swarm ARGS` to completion; returns its exit code, stdout and stderr."""
        return subprocess.run(
            [*swarm_argv(), *args],
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.files,
        )

    async def aswarm(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 30.0,
    ) -> subprocess.CompletedProcess[str]:
        """`swarm` without blocking the event loop (an in-process fleet must keep answering)."""
        proc = await asyncio.create_subprocess_exec(
            *swarm_argv(),
            *args,
            env={**self.env, **(env or {})},
            cwd=self.files,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(input.encode() if input is not None else None), timeout
            )
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError(f"swarm {' '.join(args)} did not finish in {timeout} s") from None
        return subprocess.CompletedProcess(
            [*swarm_argv(), *args], proc.returncode or 0, out.decode(), err.decode()
        )

    def start_headless(self, layout: Path, *extra: str) -> Headless:
        n = len(self._procs)
        out, err = self.files / f"swarm-{n}.out", self.files / f"swarm-{n}.err"
        with open(out, "wb") as fo, open(err, "wb") as fe:
            proc = subprocess.Popen(
                [*swarm_argv(), "up", str(layout), "--headless", *extra],
                env=self.env,
                stdout=fo,
                stderr=fe,
                stdin=subprocess.DEVNULL,
                cwd=self.files,
            )
        self._procs.append(proc)
        return Headless(proc, out, err)

    # ------------------------------------------------------------------ teardown
    def cleanup(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(5)
        for server in self._servers:
            server.kill()
        # any other tmux server started under this sandbox (tmux sockets live in TMUX_TMPDIR)
        for sock in self.home.glob(f"tmux-{os.getuid()}/*"):
            _stop_agents(["tmux", "-S", str(sock)], self.env)
            subprocess.run(
                ["tmux", "-S", str(sock), "kill-server"],
                env=self.env,
                capture_output=True,
                timeout=10,
            )
        try:
            wait_until(
                lambda: not any(s.alive() for s in self._servers),
                5,
                "the sandbox's tmux servers to exit",
            )
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
