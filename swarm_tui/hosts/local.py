"""The local machine's tmux server, reached with subprocesses and one control-mode client."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from swarm_tui import paths
from swarm_tui.errors import TmuxError
from swarm_tui.hosts.base import (
    GPU_QUERY,
    LaunchContext,
    NodeRequests,
    ensure_session,
    kill_server,
)
from swarm_tui.tmux.client import MIN_TMUX, ControlClient, parse_version
from swarm_tui.tmux.protocol import Event

CONF = Path(__file__).resolve().parent.parent / "tmux" / "swarm.conf"
RUN_WITHIN = 15.0  # seconds for a one-off tmux command (tmux answers in milliseconds)


def check_tmux(tmux: str = "tmux") -> tuple[int, int]:
    """Return tmux's version or raise one clear line saying what to install."""
    path = shutil.which(tmux)
    if path is None:
        raise TmuxError(
            f"{tmux!r} not found on PATH: install tmux {MIN_TMUX[0]}.{MIN_TMUX[1]} or newer "
            "(e.g. `apt install tmux` or `brew install tmux`)"
        )
    try:
        out = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TmuxError(f"cannot run {path}: {exc}") from None
    version = parse_version(out)
    if version < MIN_TMUX:
        raise TmuxError(
            f"{path} is {out.strip()}; swarm needs tmux {MIN_TMUX[0]}.{MIN_TMUX[1]} or newer "
            "(control-mode pause-after and subscriptions)"
        )
    return version


class _ProcWriter:
    def __init__(self, proc: asyncio.subprocess.Process):
        assert proc.stdin is not None
        self._stdin = proc.stdin
        self._proc = proc

    def write(self, data: bytes) -> None:
        self._stdin.write(data)

    async def drain(self) -> None:
        await self._stdin.drain()

    def close(self) -> None:
        if self._proc.returncode is None:
            self._stdin.close()


class LocalHost:
    """This machine: a private tmux server (own socket, own config) holding one session."""

    name = "local"

    def __init__(self, socket_name: str, session: str, tmux: str = "tmux", socket_path: str = ""):
        self.socket_name = socket_name
        self.session = session
        self.tmux = tmux
        self.socket_path = socket_path
        self.requests: NodeRequests | None = None  # its agents reach the engine's socket
        self._proc: asyncio.subprocess.Process | None = None

    async def connect(self) -> None:
        check_tmux(self.tmux)
        # agents' CLIs are told of it at launch (Claude Code and Codex need it to exist)
        state = Path(self.launch_context().state_dir)
        for folder in (*reversed(state.parents[:2]), state):
            folder.mkdir(mode=0o700, exist_ok=True)

    def launch_context(self) -> LaunchContext:
        return LaunchContext(
            python=sys.executable,
            mock_agent=shlex.join([sys.executable, "-m", "swarm_tui.agents.mock"]),
            bin_dir=str(Path(sys.executable).parent),
            socket=self.socket_path,
            state_dir=str(paths.state_dir() / "fleets" / paths.fleet_slug(self.session)),
        )

    async def read_gpus(self) -> str | None:
        command = f"command -v nvidia-smi >/dev/null 2>&1 || exit 127; {shlex.join(GPU_QUERY)}"
        rc, out = await self.shell(command, timeout=10)
        return None if rc == 127 else out if rc == 0 else ""

    async def shell(self, command: str, timeout: float = 30.0) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            return 124, f"timed out after {timeout:.0f} s"
        finally:
            if proc.returncode is None:  # timed out, or its caller left: it must not linger
                proc.kill()
                await asyncio.shield(proc.wait())
        return proc.returncode or 0, out.decode("utf-8", "replace")

    def argv(self, *args: str) -> list[str]:
        return [self.tmux, "-L", self.socket_name, "-f", str(CONF), *args]

    async def run(self, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
        """A one-off tmux command (setup and teardown only, never per refresh)."""
        proc = await asyncio.create_subprocess_exec(
            *self.argv(*args),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(stdin), RUN_WITHIN)
        except TimeoutError:  # a stopped or stuck server: never wait on it for ever
            await _kill(proc)
            raise TmuxError(f"tmux did not answer `{args[0]}` in {RUN_WITHIN:g} s") from None
        return proc.returncode or 0, out.decode("utf-8", "replace")

    async def session_exists(self) -> bool:
        rc, _ = await self.run("has-session", "-t", f"={self.session}")
        return rc == 0

    async def ensure_session(self, cwd: str) -> bool:
        """Create the fleet's session if needed; return True if it already existed."""
        return await ensure_session(self, "-c", cwd)

    async def discard_session(self) -> None:
        pass  # made by ensure_session, after the checks that can stop a start

    async def open_control(self, on_event: Callable[[Event], None]) -> ControlClient:
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv(
                "-C", "attach-session", "-t", f"={self.session}", "-f", "pause-after=5,ignore-size"
            ),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert self._proc.stdout is not None
        client = ControlClient(self._proc.stdout, _ProcWriter(self._proc), on_event)
        await client.start()
        return client

    async def close(self) -> None:
        if self._proc and self._proc.returncode is None:
            try:
                await asyncio.wait_for(self._proc.wait(), 2)
            except TimeoutError:
                await _kill(self._proc)

    def attach_argv(self, window: str) -> list[str]:
        """The command that hands the user's terminal to one agent's window."""
        return [
            self.tmux,
            "-L",
            self.socket_name,
            "select-window",
            "-t",
            window,
            ";",
            "attach-session",
            "-t",
            f"={self.session}",
        ]

    async def kill_server(self) -> None:
        await kill_server(self)


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill a tmux client and give it a moment to go. Not for ever: a client hands its
    stdin and stdout to the server, and asyncio's wait also waits for those pipes to close,
    which a stopped server would hold open for as long as it is stopped."""
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 1)
