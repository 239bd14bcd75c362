"""What the engine needs from a host: its tmux server, one-off commands, and launch facts."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from swarm_tui.errors import TmuxError
from swarm_tui.tmux.client import ControlClient
from swarm_tui.tmux.protocol import Event

# How a node's requests reach the engine: (request line, host name, the agent the node's
# kernel says sent it, or "") -> the answer. The engine's socket server provides it.
NodeRequests = Callable[[bytes, str, str], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class LaunchContext:
    """How commands run on a host: its Python, its mock agent, its `swarm` client and the
    engine's socket as seen from there."""

    python: str
    mock_agent: str  # shell words that start the mock agent
    bin_dir: str  # a directory holding `swarm`, put first on each agent's PATH
    socket: str  # SWARM_SOCKET for agents on this host
    # swarm's private (0700) directory for this fleet's runtime files on this host, such as
    # handoff notes: never the agent's working directory, which may be a source tree
    state_dir: str = ""


class Host(Protocol):
    """One machine running one tmux server for the fleet."""

    name: str
    session: str
    # where requests from the host's agents go when they do not reach the engine's own
    # socket directly (a remote node's relay); the engine's socket server sets it
    requests: NodeRequests | None

    async def connect(self) -> None:
        """Reach the machine and put swarm's support files there (idempotent)."""

    async def run(self, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
        """A one-off tmux command on this host's server."""

    async def shell(self, command: str, timeout: float = 30.0) -> tuple[int, str]:
        """A one-off shell command on the host (verify commands, telemetry, checks)."""

    async def read_gpus(self) -> str | None:
        """nvidia-smi's GPU_QUERY lines ("" when there is no reading yet, or it failed;
        None: this host has no nvidia-smi, never ask again)."""

    async def session_exists(self) -> bool: ...

    async def ensure_session(self, cwd: str) -> bool: ...

    async def discard_session(self) -> None:
        """The start stopped before any window (a worktree cannot be made): remove the
        fleet's session if connecting made it a moment ago (never one that was there)."""

    async def open_control(self, on_event: Callable[[Event], None]) -> ControlClient: ...

    def launch_context(self) -> LaunchContext: ...

    def attach_argv(self, window: str) -> list[str]: ...

    async def kill_server(self) -> None: ...

    async def close(self) -> None: ...


# what a lease probe says of a job that holds its nodes but is stopped (Slurm's SUSPENDED):
# its processes, tmux's too, do not run until it resumes
JOB_SUSPENDED = "suspended"

# GPU utilisation and memory, one CSV line per GPU (index, util %, MiB used, MiB total)
GPU_QUERY = (
    "nvidia-smi",
    "--query-gpu=index,utilization.gpu,memory.used,memory.total",
    "--format=csv,noheader,nounits",
)


# each pane's process is the leader of its own process group, and an agent's helpers stay in
# it: terminating the groups first stops CLIs that ignore tmux's SIGHUP (Gemini CLI's node
# relaunches itself and both survive a bare kill-server)
PANE_PIDS = ("list-panes", "-a", "-F", "#{pane_pid}")


def stop_panes_command(pane_pids: str) -> str:
    """The shell line that sends SIGTERM to the process groups of the given pane pids."""
    groups = " ".join(f"-{p}" for p in pane_pids.split() if p.isdigit())
    return f"kill -TERM {groups} 2>/dev/null; true" if groups else "true"


async def ensure_session(host: Host, *where: str) -> bool:
    """Create the fleet's session if needed (its placeholder window started with `where`,
    e.g. `-c DIR`); True if it already existed."""
    if await host.session_exists():
        return True
    rc, out = await host.run(
        "new-session",
        "-d",
        "-s",
        host.session,
        "-n",
        "_swarm",
        "-x",
        "120",
        "-y",
        "40",
        *where,
        "sleep 2147483647",
    )
    if rc != 0 and not await host.session_exists():
        raise TmuxError(f"{host.name}: cannot start tmux session {host.session!r}: {out.strip()}")
    return False


async def kill_server(host: Host) -> None:
    """Stop every agent's processes, then the host's tmux server, and remove its socket
    (tmux leaves the file behind)."""
    rc, out = await host.run(*PANE_PIDS)
    if rc == 0:
        await host.shell(stop_panes_command(out), timeout=10)
    found, sock = await host.run("display-message", "-p", "#{socket_path}")
    if (await host.run("kill-server"))[0] == 0 and found == 0 and sock.strip():
        await host.shell(f"rm -f -- {shlex.quote(sock.strip())}", timeout=10)
