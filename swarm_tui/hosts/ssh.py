"""A remote node reached over SSH (asyncssh): one connection, one control-mode channel, a
small pool of exec channels for one-off commands, and the node relay (swarm_tui/relay.py)
serving the fleet's socket on the node, so the node's kernel says which agent asks.

The user's ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyJump), ssh-agent and
known_hosts are honoured; host keys are always checked. Nothing needs to be installed on
the node beyond Python 3 and tmux: swarm copies its stdlib-only client there.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from swarm_tui.config.hosts import HostSpec, parse_destination
from swarm_tui.errors import HostUnreachable, TmuxError
from swarm_tui.hosts.base import LaunchContext, NodeRequests, kill_server
from swarm_tui.tmux.client import MIN_TMUX, ControlClient, parse_version
from swarm_tui.tmux.protocol import Event

PKG = Path(__file__).resolve().parent.parent
EXEC_CHANNELS = 4  # OpenSSH allows 10 sessions per connection; one is the control channel


def ssh_config_paths() -> list[str]:
    """`SWARM_SSH_CONFIG` (tests), else the user's ~/.ssh/config when it exists."""
    env = os.environ.get("SWARM_SSH_CONFIG")
    if env:
        return [env]
    default = Path.home() / ".ssh" / "config"
    return [str(default)] if default.exists() else []


def connect_options(user: str | None, port: int | None, keepalive: float) -> dict[str, object]:
    """asyncssh.connect's options: the user's ssh config, a keepalive every `keepalive` s
    (three missed: the link is down), a bounded connect."""
    options: dict[str, object] = {"config": ssh_config_paths(), "keepalive_interval": keepalive,
                                  "keepalive_count_max": 3, "connect_timeout": 10}
    if port:
        options["port"] = port
    if user:
        options["username"] = user
    return options


def explain(host: str, exc: BaseException) -> str:
    """One line a user can act on, for any failure to reach `host`."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return (f"{host}: host key not trusted (unknown, or changed since it was recorded): "
                f"check it, then accept it with `ssh {host}` once (after `ssh-keygen -R` if "
                "it changed on purpose)")
    if isinstance(exc, asyncssh.PermissionDenied):
        return (f"{host}: permission denied: check the key (IdentityFile / ssh-agent); "
                f"`ssh {host}` must log in without a password")
    if isinstance(exc, asyncssh.ConnectionLost | asyncssh.DisconnectError):
        return f"{host}: connection lost: {exc}"
    if isinstance(exc, TimeoutError):
        return f"{host}: no answer within the connect timeout (host down or firewalled?)"
    if isinstance(exc, OSError):
        return f"{host}: cannot connect: {exc.strerror or exc}"
    return f"{host}: {exc}"


class _Writer:
    def __init__(self, proc: asyncssh.SSHClientProcess[bytes]):
        self._proc = proc

    def write(self, data: bytes) -> None:
        self._proc.stdin.write(data)

    async def drain(self) -> None:
        await self._proc.stdin.drain()

    def close(self) -> None:
        self._proc.close()


class SSHHost:
    """A node of the fleet over SSH."""

    def __init__(self, name: str, spec: HostSpec, socket_name: str, session: str):
        self.name = name
        self.spec = spec
        self.socket_name = socket_name
        self.session = session
        self.user, self.address, self.port = parse_destination(spec.ssh)
        self.conn: asyncssh.SSHClientConnection | None = None
        self._pool = asyncio.Semaphore(EXEC_CHANNELS)
        self._control: asyncssh.SSHClientProcess[bytes] | None = None
        self.home = ""
        self.tmux_version = (0, 0)
        self.requests: NodeRequests | None = None  # set by the engine's socket server
        self._relay: asyncssh.SSHClientProcess[bytes] | None = None
        self._relay_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ connection
    @property
    def dir(self) -> str:
        """swarm's support directory on the node (per fleet, per host: shared homes)."""
        return f"{self.home}/.cache/swarm/{self.socket_name}"

    @property
    def remote_socket(self) -> str:
        return f"{self.dir}/swarm.sock"

    @property
    def conf(self) -> str:
        return f"{self.dir}/swarm.conf"

    async def connect(self) -> None:
        """Connect (keepalive on, host key checked), copy the client, forward the socket."""
        await self.close()
        try:
            # the whole bring-up is bounded: a half-open link must not hang the fleet
            self.conn = await asyncio.wait_for(
                asyncssh.connect(self.address, **connect_options(self.user, self.port, 3)), 30)
            await asyncio.wait_for(self._prepare(), 60)
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            await self.close()
            raise HostUnreachable(explain(self.name, exc)) from None

    async def _prepare(self) -> None:
        rc, out = await self.shell('printf "%s\\n" "$HOME"; command -v python3; '
                                   f"{shlex.quote(self.spec.tmux)} -V")
        lines = out.splitlines()
        self.home = lines[0].strip() if lines else ""
        if not self.home:
            raise HostUnreachable(f"{self.name}: cannot read $HOME on the node: {out.strip()}")
        if "tmux " not in out:
            raise HostUnreachable(f"{self.name}: tmux not found on the node: install tmux "
                                  f"{MIN_TMUX[0]}.{MIN_TMUX[1]}+ there")
        self.tmux_version = parse_version(next(ln for ln in lines if "tmux " in ln))
        if self.tmux_version < MIN_TMUX:
            raise HostUnreachable(f"{self.name}: tmux {self.tmux_version} on the node is too "
                                  f"old: swarm needs {MIN_TMUX[0]}.{MIN_TMUX[1]}+")
        files = {
            self.conf: ((PKG / "tmux" / "swarm.conf").read_text(), "600"),
            f"{self.dir}/bin/swarm": ("#!/usr/bin/env python3\n"
                                      + (PKG / "client.py").read_text(), "755"),
            f"{self.dir}/bin/swarm-mock-agent": ("#!/usr/bin/env python3\n"
                                                 + (PKG / "agents" / "mock.py").read_text(),
                                                 "755"),
            self.relay_path: ((PKG / "relay.py").read_text(), "600"),
        }
        for path, (text, mode) in files.items():
            d = shlex.quote(str(Path(path).parent))
            q = shlex.quote(path)
            rc, out = await self.shell(f"mkdir -p {d} && chmod 700 {shlex.quote(self.dir)} "
                                       f"&& cat > {q} && chmod {mode} {q}", stdin=text)
            if rc != 0:
                raise HostUnreachable(f"{self.name}: cannot write {path}: {out.strip()}")
        await self._start_relay()

    @property
    def relay_path(self) -> str:
        return f"{self.dir}/relay.py"

    async def _start_relay(self) -> None:
        """The node's agents reach the engine through the relay's socket (0600 in 0700)."""
        assert self.conn is not None
        command = shlex.join([self.spec.python, self.relay_path, self.remote_socket,
                              json.dumps(self.tmux_argv())])
        try:
            relay = await self.conn.create_process(command, encoding=None)
            first = await asyncio.wait_for(relay.stdout.readline(), 30)
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise HostUnreachable(f"{self.name}: the node relay did not start: {exc}") from None
        if b'"ready"' not in first:
            relay.close()
            raise HostUnreachable(f"{self.name}: the node relay did not start: "
                                  f"{first.decode(errors='replace').strip() or 'no output'}")
        self._relay = relay
        self._spawn(self._serve_relay(relay))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._relay_tasks.add(task)
        task.add_done_callback(self._relay_tasks.discard)

    async def _serve_relay(self, relay: asyncssh.SSHClientProcess[bytes]) -> None:
        """Requests from the node's agents, each answered on its own (one slow `send
        --wait` holds up no other)."""
        while line := await relay.stdout.readline():
            try:
                frame = json.loads(line)
            except ValueError:
                continue
            if isinstance(frame, dict) and "id" in frame:
                self._spawn(self._answer(relay, frame))

    async def _answer(self, relay: asyncssh.SSHClientProcess[bytes],
                      frame: dict[str, Any]) -> None:
        if self.requests is None:
            reply: dict[str, Any] = {"ok": False, "error": "swarm is starting: try again"}
        else:
            reply = await self.requests(str(frame.get("line", "")).encode(), self.name,
                                        str(frame.get("agent", "")))
        try:
            relay.stdin.write(json.dumps({"id": frame["id"], "reply": reply}).encode() + b"\n")
        except (OSError, asyncssh.Error):
            pass  # the link went: the node's client hears the relay hang up

    async def close(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        for task in list(self._relay_tasks):
            task.cancel()
        if self.conn is not None:
            self.conn.close()
            try:
                await asyncio.wait_for(self.conn.wait_closed(), 2)
            except (TimeoutError, OSError, asyncssh.Error):
                pass
            self.conn = None

    @property
    def connected(self) -> bool:
        return self.conn is not None and not self.conn.is_closed()

    # ------------------------------------------------------------------ commands
    async def shell(self, command: str, timeout: float = 30.0,
                    stdin: str | None = None) -> tuple[int, str]:
        if self.conn is None:
            raise HostUnreachable(f"{self.name}: not connected")
        async with self._pool:
            try:
                result = await asyncio.wait_for(
                    self.conn.run(command, input=stdin, check=False, stderr=asyncssh.STDOUT,
                                  errors="replace"),
                    timeout)
            except TimeoutError:
                return 124, f"timed out after {timeout:.0f} s"
            except (OSError, asyncssh.Error) as exc:
                raise HostUnreachable(explain(self.name, exc)) from None
        out = result.stdout if isinstance(result.stdout, str) else ""
        return result.exit_status or 0, out

    def tmux_argv(self, *args: str) -> list[str]:
        return [self.spec.tmux, "-L", self.socket_name, "-f", self.conf, *args]

    async def run(self, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
        return await self.shell(shlex.join(self.tmux_argv(*args)),
                                stdin=stdin.decode() if stdin is not None else None)

    async def session_exists(self) -> bool:
        rc, _ = await self.run("has-session", "-t", f"={self.session}")
        return rc == 0

    async def ensure_session(self, cwd: str) -> bool:
        if await self.session_exists():
            return True
        rc, out = await self.run("new-session", "-d", "-s", self.session, "-n", "_swarm",
                                 "-x", "120", "-y", "40", "sleep 2147483647")
        if rc != 0 and not await self.session_exists():
            raise TmuxError(f"{self.name}: cannot start tmux session: {out.strip()}")
        return False

    async def open_control(self, on_event: Callable[[Event], None]) -> ControlClient:
        if self.conn is None:
            raise HostUnreachable(f"{self.name}: not connected")
        cmd = shlex.join(self.tmux_argv("-C", "attach-session", "-t", f"={self.session}",
                                        "-f", "pause-after=5,ignore-size"))
        try:
            # no PTY: control mode's replies must arrive byte for byte
            self._control = await self.conn.create_process(cmd, encoding=None)
        except (OSError, asyncssh.Error) as exc:
            raise HostUnreachable(explain(self.name, exc)) from None
        client = ControlClient(self._control.stdout, _Writer(self._control), on_event)
        await client.start()
        return client

    def launch_context(self) -> LaunchContext:
        python = shlex.quote(self.spec.python)
        return LaunchContext(
            python=self.spec.python,
            mock_agent=f"{python} {shlex.quote(self.dir + '/bin/swarm-mock-agent')}",
            bin_dir=f"{self.dir}/bin",
            socket=self.remote_socket,
            state_dir=self.dir,  # 0700, per fleet and host, beside the socket and client
        )

    def attach_argv(self, window: str) -> list[str]:
        remote = shlex.join(self.tmux_argv("select-window", "-t", window, ";",
                                           "attach-session", "-t", f"={self.session}"))
        argv = ["ssh", "-t"]
        if os.environ.get("SWARM_SSH_CONFIG"):
            argv += ["-F", os.environ["SWARM_SSH_CONFIG"]]
        if self.port:
            argv += ["-p", str(self.port)]
        dest = f"{self.user}@{self.address}" if self.user else self.address
        return [*argv, dest, remote]

    async def kill_server(self) -> None:
        await kill_server(self)
