"""An in-process SSH server for tests: port 0, generated keys, commands run on this machine.

Each `SSHNode` is a "remote node" that needs no privileges: its process factory runs the
client's command with a local shell, and it honours reverse Unix-socket forwarding, so the
fleet's socket reaches agents "on" it. `drop()` cuts every connection (an outage); `restart()`
listens again on the same port.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh


class _Server(asyncssh.SSHServer):
    def __init__(self, node: SSHNode):
        self.node = node

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.node.connections.append(conn)

    def unix_server_requested(self, listen_path: str) -> bool:
        return True

    def connection_requested(
        self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
    ) -> bool:
        self.node.tunnels.append((dest_host, dest_port))  # used as a ProxyJump host
        return True


async def _run_command(process: asyncssh.SSHServerProcess[bytes]) -> None:
    local = await asyncio.create_subprocess_shell(
        process.command or "exec $SHELL -l",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert local.stdin and local.stdout and local.stderr
    stdin = local.stdin

    async def feed() -> None:
        try:
            while data := await process.stdin.read(65536):
                stdin.write(data)
                await stdin.drain()
        except (OSError, asyncssh.Error):
            pass
        finally:
            stdin.close()

    async def copy(reader: asyncio.StreamReader, write: object) -> None:
        while chunk := await reader.read(65536):
            write(chunk)  # type: ignore[operator]

    feeder = asyncio.create_task(feed())
    try:
        await asyncio.gather(
            copy(local.stdout, process.stdout.write), copy(local.stderr, process.stderr.write)
        )
        process.exit(await local.wait())
    except (OSError, asyncssh.Error):
        pass
    finally:
        feeder.cancel()
        if local.returncode is None:
            local.kill()
            await local.wait()


@dataclass
class SSHNode:
    """A test SSH server on 127.0.0.1 and the client config that reaches it as `name`."""

    name: str
    dir: Path
    port: int = 0
    connections: list[asyncssh.SSHServerConnection] = field(default_factory=list)
    tunnels: list[tuple[str, int]] = field(default_factory=list)
    jump: str = ""  # reach this node through another (ProxyJump)
    _acceptor: asyncssh.SSHAcceptor | None = None
    host_key: asyncssh.SSHKey = field(
        default_factory=lambda: asyncssh.generate_private_key("ssh-ed25519")
    )

    async def start(self, client_key: asyncssh.SSHKey) -> None:
        self._client_key = client_key
        await self.restart()

    async def restart(self) -> None:
        authorized = asyncssh.import_authorized_keys(client_key_line(self._client_key))
        self._acceptor = await asyncssh.listen(
            "127.0.0.1",
            self.port,
            server_factory=lambda: _Server(self),
            server_host_keys=[self.host_key],
            authorized_client_keys=authorized,
            process_factory=_run_command,
            encoding=None,
            reuse_address=True,
            keepalive_interval=2,
        )
        self.port = self._acceptor.sockets[0].getsockname()[1]

    def drop(self) -> None:
        """Stop listening and cut every connection: the node's link is down."""
        if self._acceptor is not None:
            self._acceptor.close()
            self._acceptor = None
        for conn in self.connections:
            conn.abort()
        self.connections.clear()

    async def close(self) -> None:
        self.drop()

    def known_hosts_line(self) -> str:
        key = self.host_key.export_public_key("openssh").decode().strip()
        return f"[127.0.0.1]:{self.port} {key}\n"

    def config_block(self, key_path: Path, known_hosts: Path) -> str:
        jump = f"  ProxyJump {self.jump}\n" if self.jump else ""
        return (
            f"Host {self.name}\n  HostName 127.0.0.1\n  Port {self.port}\n"
            f"  User {os.environ.get('USER', 'root')}\n  IdentityFile {key_path}\n"
            f"  UserKnownHostsFile {known_hosts}\n  IdentitiesOnly yes\n{jump}\n"
        )


def client_key_line(key: asyncssh.SSHKey) -> str:
    return key.export_public_key("openssh").decode()


@dataclass
class SSHCluster:
    """Several test nodes, one client key, one ssh config and known_hosts for them all."""

    dir: Path
    nodes: dict[str, SSHNode] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.key = asyncssh.generate_private_key("ssh-ed25519")
        self.key_path = self.dir / "id_ed25519"
        self.key.write_private_key(str(self.key_path))
        os.chmod(self.key_path, 0o600)
        self.known_hosts = self.dir / "known_hosts"
        self.config = self.dir / "ssh_config"

    async def add(self, name: str, jump: str = "") -> SSHNode:
        node = SSHNode(name, self.dir, jump=jump)
        await node.start(self.key)
        self.nodes[name] = node
        self.write()
        return node

    def write(self) -> None:
        self.known_hosts.write_text("".join(n.known_hosts_line() for n in self.nodes.values()))
        self.config.write_text(
            "".join(n.config_block(self.key_path, self.known_hosts) for n in self.nodes.values())
        )

    async def close(self) -> None:
        for node in self.nodes.values():
            await node.close()
