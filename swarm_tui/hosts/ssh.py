"""A remote node reached over SSH (asyncssh): one connection carries the node's control-mode
channel, the relay and a small pool of exec channels for one-off commands (hosts/remote.py
does the rest).

The user's ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyJump), ssh-agent and
known_hosts are honoured; host keys are always checked.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncssh

from swarm_tui.config.hosts import HostSpec, parse_destination
from swarm_tui.errors import HostUnreachable
from swarm_tui.hosts.remote import RemoteHost
from swarm_tui.tmux.client import Reader, Writer

EXEC_CHANNELS = 4  # OpenSSH allows 10 sessions per connection; one is the control channel


def ssh_config_paths() -> list[str]:
    """`SWARM_SSH_CONFIG` (tests), else the user's ~/.ssh/config when it exists."""
    env = os.environ.get("SWARM_SSH_CONFIG")
    if env:
        return [env]
    default = Path.home() / ".ssh" / "config"
    return [str(default)] if default.exists() else []


CIPHERS = [
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
]


def connect_options(user: str | None, port: int | None, keepalive: float) -> dict[str, object]:
    """asyncssh.connect's options: the user's ssh config, a keepalive every `keepalive` s
    (three missed: the link is down), a bounded connect, and AES-GCM preferred: asyncssh's
    ChaCha20-Poly1305 (OpenSSH's first choice) builds its ciphers anew for every packet in
    Python, 13.5 us per 512-byte packet against GCM's 2.1, and a node's control channel
    carries thousands of packets a second while its agents print (the same ciphers are
    allowed, in another order)."""
    options: dict[str, object] = {
        "config": ssh_config_paths(),
        "keepalive_interval": keepalive,
        "keepalive_count_max": 3,
        "connect_timeout": 10,
        "encryption_algs": CIPHERS,
    }
    if port:
        options["port"] = port
    if user:
        options["username"] = user
    return options


def explain(host: str, exc: BaseException) -> str:
    """One line a user can act on, for any failure to reach `host`."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return (
            f"{host}: host key not trusted (unknown, or changed since it was recorded): "
            f"check it, then accept it with `ssh {host}` once (after `ssh-keygen -R` if "
            "it changed on purpose)"
        )
    if isinstance(exc, asyncssh.PermissionDenied):
        return (
            f"{host}: permission denied: check the key (IdentityFile / ssh-agent); "
            f"`ssh {host}` must log in without a password"
        )
    if isinstance(exc, asyncssh.ConnectionLost | asyncssh.DisconnectError):
        return f"{host}: connection lost: {exc}"
    if isinstance(exc, TimeoutError):
        return f"{host}: no answer within the connect timeout (host down or firewalled?)"
    if isinstance(exc, OSError):
        return f"{host}: cannot connect: {exc.strerror or exc}"
    return f"{host}: {exc}"


class SshProc:
    """A command on the node over the connection, no PTY (tmux control mode, the relay)."""

    def __init__(self, proc: asyncssh.SSHClientProcess[bytes]):
        self._proc = proc

    @property
    def stdout(self) -> Reader:
        return self._proc.stdout

    def write(self, data: bytes) -> None:
        self._proc.stdin.write(data)

    async def drain(self) -> None:
        await self._proc.stdin.drain()

    async def readline(self) -> bytes:
        try:
            return await self._proc.stdout.readline()
        except (OSError, asyncssh.Error):
            return b""  # the link went: the end of its output

    def close(self) -> None:
        self._proc.close()


class SshTransport:
    """One SSH connection to the node (keepalive on, host key checked)."""

    def __init__(self, name: str, destination: str):
        self.name = name
        self.user, self.address, self.port = parse_destination(destination)
        self.conn: asyncssh.SSHClientConnection | None = None
        self._pool = asyncio.Semaphore(EXEC_CHANNELS)

    @property
    def connected(self) -> bool:
        return self.conn is not None and not self.conn.is_closed()

    async def open(self) -> None:
        try:
            self.conn = await asyncio.wait_for(
                asyncssh.connect(self.address, **connect_options(self.user, self.port, 3)), 30
            )
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise HostUnreachable(explain(self.name, exc)) from None

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            try:
                await asyncio.wait_for(self.conn.wait_closed(), 2)
            except (TimeoutError, OSError, asyncssh.Error):
                pass
            self.conn = None

    async def run(self, command: str, stdin: str | None, timeout: float) -> tuple[int, str]:
        if self.conn is None:
            raise HostUnreachable(f"{self.name}: not connected")
        async with self._pool:
            try:
                result = await asyncio.wait_for(
                    self.conn.run(
                        command, input=stdin, check=False, stderr=asyncssh.STDOUT, errors="replace"
                    ),
                    timeout,
                )
            except TimeoutError:
                return 124, f"timed out after {timeout:.0f} s"
            except (OSError, asyncssh.Error) as exc:
                raise HostUnreachable(explain(self.name, exc)) from None
        out = result.stdout if isinstance(result.stdout, str) else ""
        return result.exit_status or 0, out

    async def spawn(self, command: str) -> SshProc:
        if self.conn is None:
            raise HostUnreachable(f"{self.name}: not connected")
        try:
            return SshProc(await self.conn.create_process(command, encoding=None))
        except (OSError, asyncssh.Error) as exc:
            raise HostUnreachable(explain(self.name, exc)) from None

    async def open_socket(self, path: str) -> tuple[Reader, Writer] | None:
        """A direct-streamlocal channel: sshd connects it to the socket itself (no session,
        no shell). None where the node's sshd forbids it (DisableForwarding)."""
        if self.conn is None:
            raise HostUnreachable(f"{self.name}: not connected")
        try:
            reader, writer = await self.conn.open_unix_connection(path)
        except (OSError, asyncssh.Error):
            return None
        return reader, writer

    def terminal_argv(self, command: str) -> list[str]:
        argv = ["ssh", "-t"]
        if os.environ.get("SWARM_SSH_CONFIG"):
            argv += ["-F", os.environ["SWARM_SSH_CONFIG"]]
        if self.port:
            argv += ["-p", str(self.port)]
        dest = f"{self.user}@{self.address}" if self.user else self.address
        return [*argv, dest, command]


class SSHHost(RemoteHost):
    """A node of the fleet over SSH."""

    def __init__(self, name: str, spec: HostSpec, socket_name: str, session: str):
        super().__init__(name, spec, socket_name, session, SshTransport(name, spec.ssh))
