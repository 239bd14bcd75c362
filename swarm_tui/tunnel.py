"""`swarm ui --ssh HOST`: watch an engine that runs on another machine (a cluster's head node)
from this one, through the fleet's socket forwarded over SSH.

One asyncssh connection (the user's ~/.ssh/config, ssh-agent and known_hosts, as for nodes)
forwards a private local socket to the engine's socket there. When the link drops the view
says "engine unreachable" and keeps retrying; the tunnel reconnects with backoff underneath,
and the engine on the head node never notices more than a watcher leaving and coming back.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import tempfile
from pathlib import Path

import asyncssh

from swarm_tui.config.hosts import parse_destination
from swarm_tui.errors import SwarmError
from swarm_tui.hosts.ssh import connect_options, explain
from swarm_tui.paths import fleet_slug

BACKOFF_MAX = 10.0

# swarm's state directory on the remote machine, as swarm there computes it
_STATE = 'printf "%s\\n" "${SWARM_HOME:-${XDG_STATE_HOME:-$HOME/.local/state}/swarm}"'


class Tunnel:
    """The engine's socket on `destination`, reachable here at `local`."""

    def __init__(self, destination: str, fleet: str | None, remote_home: str = ""):
        self.user, self.address, self.port = parse_destination(destination)
        self.destination = destination
        self.fleet = fleet
        self.remote_home = remote_home
        self._dir = Path(tempfile.mkdtemp(prefix="swarm-ui-"))  # 0700
        self.local = self._dir / "engine.sock"
        self.remote = ""
        self._conn: asyncssh.SSHClientConnection | None = None
        self._keeper: asyncio.Task[None] | None = None

    async def open(self) -> Path:
        """Connect, find the fleet's socket there, forward it; keep it forwarded."""
        await self._connect()
        self._keeper = asyncio.create_task(self._keep(), name="ssh-tunnel")
        return self.local

    async def _connect(self) -> None:
        options = connect_options(self.user, self.port, 5)
        try:
            conn = await asyncio.wait_for(asyncssh.connect(self.address, **options), 30)
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise SwarmError(explain(self.destination, exc)) from None
        try:
            if not self.remote:
                self.remote = await self._find_socket(conn)
            with contextlib.suppress(FileNotFoundError):
                self.local.unlink()
            await conn.forward_local_path(str(self.local), self.remote)
        except (OSError, asyncssh.Error) as exc:
            conn.close()
            raise SwarmError(explain(self.destination, exc)) from None
        self._conn = conn

    async def _find_socket(self, conn: asyncssh.SSHClientConnection) -> str:
        base = shlex.quote(self.remote_home) if self.remote_home else None
        state = f'printf "%s\\n" {base}' if base else _STATE
        result = await conn.run(f'dir=$({state}); ls "$dir"/run/*.sock 2>/dev/null', check=False)
        socks = str(result.stdout or "").split()
        if self.fleet:
            want = f"/{fleet_slug(self.fleet)}.sock"
            found = [s for s in socks if s.endswith(want)]
            if not found:
                raise SwarmError(
                    f"{self.destination}: no swarm engine runs fleet "
                    f"{self.fleet!r} there (running: "
                    f"{', '.join(Path(s).stem for s in socks) or 'none'})"
                )
            return found[0]
        if len(socks) != 1:
            what = ", ".join(Path(s).stem for s in socks) or "none"
            raise SwarmError(f"{self.destination}: name the fleet (engines running there: {what})")
        return socks[0]

    async def _keep(self) -> None:
        """Reconnect whenever the link drops, with backoff; never gives up on its own."""
        delay = 0.5
        while True:
            conn = self._conn
            if conn is not None:
                await conn.wait_closed()
            self._conn = None
            try:
                await self._connect()
                delay = 0.5
            except SwarmError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)

    async def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
        if self._conn is not None:
            self._conn.close()
        with contextlib.suppress(OSError):
            self.local.unlink()
        with contextlib.suppress(OSError):
            self._dir.rmdir()
