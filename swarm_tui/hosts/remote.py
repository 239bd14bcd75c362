"""A remote node, whatever carries the bytes there: one control-mode channel for its tmux
server, a small pool of one-off commands, and the node relay (swarm_tui/relay.py) serving the
fleet's socket on the node, so the node's kernel says which agent asks.

The carrier is a `Transport`: SSH (hosts/ssh.py, asyncssh) or Slurm's `srun --overlap` into
the job that holds the node (hosts/srun.py). A new one (`kubectl exec`, say) is a module with
a class of the four methods below; nothing else changes. Nothing needs to be installed on the
node beyond Python 3 and tmux: swarm copies its stdlib-only client there.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from swarm_tui.config.hosts import HostSpec
from swarm_tui.errors import HostUnreachable
from swarm_tui.hosts.base import (
    GPU_QUERY,
    LaunchContext,
    NodeRequests,
    ensure_session,
    kill_server,
)
from swarm_tui.tmux.client import MIN_TMUX, ControlClient, Reader, Writer, parse_version
from swarm_tui.tmux.protocol import Event

PKG = Path(__file__).resolve().parent.parent
# The set-up's Python (`python -c BOOT`, its only Python process; a second costs as much as
# an rc file and a shim on a busy node): say $HOME, write the files of the JSON line on stdin
# into swarm's 0700 directory, give a session the shell made a moment ago swarm's tmux config
# (argv[1] "made"), then become the node relay in this same process. Until then fd 2 is
# stdout, so what goes wrong is read by the engine; the shell keeps the real stderr in fd 3.
# tmux is started by the shell, not from here: a Python reached through a shim (pyenv) has
# the shim's PATH, which the agents' windows must not inherit.
BOOT = """
import sys
if sys.version_info < (3, 8):  # before stdin is read: the shell then tries the configured one
    sys.exit(86)
import json, os, runpy, subprocess
home = os.path.expanduser("~")
print("SWARM-HOME " + home, flush=True)
data = json.loads(sys.stdin.readline())  # one line: the rest of stdin is the relay's
top = os.path.join(home, data["dir"])
os.makedirs(top, mode=0o700, exist_ok=True)
os.chmod(top, 0o700)
for name, (text, mode) in data["files"].items():
    path = os.path.join(top, name)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = path + ".tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
memo = os.path.join(top, data["memo"][0])  # the interpreter the configured python led to
with open(os.open(memo + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    f.write(data["memo"][1] + "\\n" + sys.executable + "\\n")
os.replace(memo + ".tmp", memo)
print("SWARM-FILES-WRITTEN", flush=True)
if sys.argv[1:] == ["made"]:
    tmux = [os.path.join(home, a[2:]) if a.startswith("~/") else a for a in data["tmux"]]
    subprocess.run(tmux + ["source-file", os.path.join(top, "swarm.conf")])
os.dup2(3, 2)
os.close(3)
sys.argv = [os.path.join(top, "relay.py")] + data["relay"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


class Proc(Protocol):
    """A long-running command on the node (tmux in control mode, the relay): its output,
    its input, and an end."""

    @property
    def stdout(self) -> Reader: ...

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    async def readline(self) -> bytes: ...

    def close(self) -> None: ...


class Transport(Protocol):
    """How bytes reach one node. Raises HostUnreachable, with a line a user can act on."""

    @property
    def connected(self) -> bool: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, command: str, stdin: str | None, timeout: float) -> tuple[int, str]:
        """A shell command on the node: its exit status and its output (stderr too)."""

    async def spawn(self, command: str) -> Proc:
        """A shell command on the node that runs on, no terminal: bytes in, bytes out."""

    async def open_socket(self, path: str) -> tuple[Reader, Writer] | None:
        """A stream to a Unix socket on the node, with no shell started for it; None when
        this transport (or the node's sshd) cannot."""

    def terminal_argv(self, command: str) -> list[str]:
        """The local command that runs `command` on the node in the user's terminal."""


GPU_EVERY = 5.0  # seconds between the relay's nvidia-smi readings


class RemoteHost:
    """A node of the fleet, over a transport."""

    # the fleet's tmux session is made by the set-up command (one shell on the node, not
    # three); a transport whose commands' processes end with them (srun) starts it apart
    session_in_setup = True

    def __init__(
        self, name: str, spec: HostSpec, socket_name: str, session: str, transport: Transport
    ):
        self.name = name
        self.spec = spec
        self.socket_name = socket_name
        self.session = session
        self.transport = transport
        self.home = ""
        self.tmux_version = (0, 0)
        self.requests: NodeRequests | None = None  # set by the engine's socket server
        self._control: Writer | None = None
        self._relay: Proc | None = None
        self._relay_tasks: set[asyncio.Task[None]] = set()
        self._session_found: bool | None = None  # the set-up's word: the session existed
        self._gpus: str | None = ""  # the relay's last nvidia-smi reading (None: none there)

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

    @property
    def connected(self) -> bool:
        return self.transport.connected

    async def connect(self) -> None:
        """Reach the node, check tmux, copy the client, start the relay: bounded, so a
        half-open link never hangs the fleet."""
        await self.close()
        try:
            await self.transport.open()
            await asyncio.wait_for(self._prepare(), 60)
        except TimeoutError:
            await self.close()
            raise HostUnreachable(
                f"{self.name}: no answer while preparing the node (60 s)"
            ) from None
        except HostUnreachable:
            await self.close()
            raise

    def _session_setup(self) -> str:
        """Shell: make the fleet's session unless it exists, and say which. Its server
        starts with no config (`-f /dev/null`: not the user's ~/.tmux.conf either); BOOT
        gives it swarm's once the file is there, before any agent's window is made (and to
        a server found without it: `@swarm_conf`, set by swarm.conf)."""
        tmux = shlex.join([self.spec.tmux, "-L", self.socket_name, "-f", "/dev/null"])
        # found: given swarm's config unless it has it (made by a set-up that then failed)
        return (
            f"if {tmux} has-session -t {shlex.quote('=' + self.session)} 2>/dev/null; "
            "then echo SWARM-SESSION-FOUND; "
            f'[ "$({tmux} show-options -gqv @swarm_conf)" = 1 ] || made=made; '
            f"elif {tmux} new-session -d -s "
            f"{shlex.quote(self.session)} -n _swarm -x 120 -y 40 'sleep 2147483647'; "
            "then echo SWARM-SESSION-MADE; made=made; fi; "
        )

    async def _prepare(self) -> None:
        """One command on the node (each costs a login shell there): its shell says tmux's
        version, makes the fleet's tmux session and picks the interpreter; its one Python
        process (BOOT) says $HOME, writes swarm's client, relay, mock agent and tmux config
        into its private directory, then becomes the node relay: the node's agents reach
        the engine through its socket (0600 in 0700), and this command's channel carries
        them."""
        top = f".cache/swarm/{self.socket_name}"
        tmux = [self.spec.tmux, "-L", self.socket_name, "-f", f"~/{top}/swarm.conf"]
        options = {
            "gpu": GPU_QUERY,
            "every": GPU_EVERY,
            "control": {"path": f"~/{top}/control.sock", "argv": self._attach_args()},
        }
        payload = json.dumps(
            {
                "dir": top,
                "files": {
                    "swarm.conf": ((PKG / "tmux" / "swarm.conf").read_text(), 0o600),
                    "bin/swarm": (
                        "#!/usr/bin/env python3\n" + (PKG / "client.py").read_text(),
                        0o755,
                    ),
                    "bin/swarm-mock-agent": (
                        "#!/usr/bin/env python3\n" + (PKG / "agents" / "mock.py").read_text(),
                        0o755,
                    ),
                    "relay.py": ((PKG / "relay.py").read_text(), 0o600),
                },
                "tmux": tmux,
                "memo": [self._memo, self.spec.python],
                "relay": [f"~/{top}/swarm.sock", json.dumps(tmux), json.dumps(options)],
            }
        )
        relay = None
        try:
            relay = await self.transport.spawn(
                f"{{ {shlex.quote(self.spec.tmux)} -V; made=; "
                + (self._session_setup() if self.session_in_setup else "")
                # after tmux: its server must not hold the channel's stderr (fd 3) open
                + self._interpreter(top)
                + f"}} 2>&1; exec 3>&2 2>&1; {self._boot()}"
            )
            relay.write(payload.encode() + b"\n")
            await relay.drain()
            lines: list[str] = []
            while (line := await relay.readline()) and b'"ready"' not in line:
                lines.append(line.decode(errors="replace").rstrip("\r\n"))
            self._check_setup(lines)
            if not line:
                raise HostUnreachable(
                    f"{self.name}: the node relay did not start: "
                    f"{lines[-1] if lines else 'no output'}"
                )
        except BaseException:
            if relay is not None:
                relay.close()
            raise
        self._relay = relay
        self._spawn(self._serve_relay(relay))

    @property
    def _memo(self) -> str:
        return "python." + re.sub(r"[^A-Za-z0-9._-]", "_", self.name)

    def _interpreter(self, top: str) -> str:
        """Shell: $p, the Python that runs BOOT: the interpreter the configured `python`
        led to last time on this node (BOOT records it), when it is still there; else, for
        the default `python3`, the first python3 on PATH that is a program rather than a
        script (a pyenv or asdf shim: ~90 ms of the node's CPU per start, the interpreter
        behind it ~10 with -I -S; BOOT and the relay need only the standard library); else
        the configured one. Ansible remembers a host's interpreter likewise."""
        python = shlex.quote(self.spec.python)
        memo = '"$HOME"/' + shlex.quote(f"{top}/{self._memo}")
        found = (
            f"w=; p=; {{ read -r w && read -r p; }} 2>/dev/null < {memo}; "
            f'[ "$w" = {python} ] && [ -x "$p" ] || p=; '
        )
        if self.spec.python != "python3":
            return found
        return found + (
            'if [ -z "$p" ]; then o=$IFS; IFS=:; for d in $PATH; do '
            '[ -f "$d/python3" ] && [ -x "$d/python3" ] || continue; '
            '[ "$(head -c 2 "$d/python3" 2>/dev/null)" = "#!" ] && continue; '
            "p=$d/python3; break; done; IFS=$o; fi; "
        )

    def _boot(self) -> str:
        """Shell: run BOOT with $p (isolated, no site: the standard library is all it needs,
        and a site's .pth files cost a busy node more than the interpreter's start). If $p
        is not there to start, or is older than 3.8, BOOT has read nothing yet: the
        configured `python` runs it instead."""
        python = shlex.quote(self.spec.python)
        boot = shlex.quote(BOOT)
        return (
            f'[ -n "$p" ] || p={python}; "$p" -I -S -c {boot} $made || {{ s=$?; '
            f'case $s in 86|126|127) [ "$p" = {python} ] || exec {python} -c {boot} $made;; esac; '
            "exit $s; }"
        )

    def _check_setup(self, lines: list[str]) -> None:
        """What the set-up printed: $HOME, tmux's version, the files written, the session."""
        self._session_found = (
            True
            if "SWARM-SESSION-FOUND" in lines
            else False
            if "SWARM-SESSION-MADE" in lines
            else None
        )
        homes = [ln[len("SWARM-HOME ") :] for ln in lines if ln.startswith("SWARM-HOME ")]
        if not homes:
            raise HostUnreachable(
                f"{self.name}: cannot run {self.spec.python} on the node "
                f"(swarm needs Python 3 there; set the host's `python`): "
                + (lines[-1].strip() if lines else "no output")
            )
        self.home = homes[0].strip()
        if not any(ln.startswith("tmux ") for ln in lines):
            raise HostUnreachable(
                f"{self.name}: tmux not found on the node: install tmux "
                f"{MIN_TMUX[0]}.{MIN_TMUX[1]}+ there"
            )
        self.tmux_version = parse_version(next(ln for ln in lines if ln.startswith("tmux ")))
        if self.tmux_version < MIN_TMUX:
            raise HostUnreachable(
                f"{self.name}: tmux {self.tmux_version} on the node is too "
                f"old: swarm needs {MIN_TMUX[0]}.{MIN_TMUX[1]}+"
            )
        if "SWARM-FILES-WRITTEN" not in lines:
            raise HostUnreachable(
                f"{self.name}: cannot write swarm's files in {self.dir} "
                f"with {self.spec.python}: {lines[-1]}"
            )

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._relay_tasks.add(task)
        task.add_done_callback(self._relay_tasks.discard)

    async def _serve_relay(self, relay: Proc) -> None:
        """Requests from the node's agents, each answered on its own (one slow `send
        --wait` holds up no other)."""
        while line := await relay.readline():
            try:
                frame = json.loads(line)
            except ValueError:
                continue
            if isinstance(frame, dict) and "id" in frame:
                self._spawn(self._answer(relay, frame))
            elif isinstance(frame, dict) and "gpus" in frame:
                gpus = frame["gpus"]
                self._gpus = gpus if gpus is None else str(gpus)

    async def _answer(self, relay: Proc, frame: dict[str, Any]) -> None:
        if self.requests is None:
            reply: dict[str, Any] = {"ok": False, "error": "swarm is starting: try again"}
        else:
            reply = await self.requests(
                str(frame.get("line", "")).encode(), self.name, str(frame.get("agent", ""))
            )
        try:
            relay.write(json.dumps({"id": frame["id"], "reply": reply}).encode() + b"\n")
        except Exception:  # noqa: BLE001 - the link went: the node's client hears the hang-up
            pass

    async def close(self) -> None:
        for proc in (self._control, self._relay):
            if proc is not None:
                proc.close()
        self._control = self._relay = None
        for task in list(self._relay_tasks):
            task.cancel()
        await self.transport.close()

    # ------------------------------------------------------------------ commands
    async def shell(
        self, command: str, timeout: float = 30.0, stdin: str | None = None
    ) -> tuple[int, str]:
        if not self.transport.connected:
            raise HostUnreachable(f"{self.name}: not connected")
        return await self.transport.run(command, stdin, timeout)

    def tmux_argv(self, *args: str) -> list[str]:
        return [self.spec.tmux, "-L", self.socket_name, "-f", self.conf, *args]

    async def run(self, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
        return await self.shell(
            shlex.join(self.tmux_argv(*args)), stdin=stdin.decode() if stdin is not None else None
        )

    async def read_gpus(self) -> str | None:
        """What the relay last read (it runs nvidia-smi every GPU_EVERY seconds on the node:
        no SSH session, no login shell per reading)."""
        return self._gpus

    async def session_exists(self) -> bool:
        rc, _ = await self.run("has-session", "-t", f"={self.session}")
        return rc == 0

    async def ensure_session(self, cwd: str) -> bool:
        found, self._session_found = self._session_found, None
        if found is not None:  # the set-up made it or saw it, a moment ago
            return found
        return await ensure_session(self)

    async def discard_session(self) -> None:
        made, self._session_found = self._session_found is False, None
        if made:
            await self.run("kill-session", "-t", f"={self.session}")

    def _attach_args(self) -> list[str]:
        return ["-C", "attach-session", "-t", f"={self.session}", "-f", "pause-after=5,ignore-size"]

    async def open_control(self, on_event: Callable[[Event], None]) -> ControlClient:
        """tmux in control mode on the node: through the relay's control socket (an SSH
        stream: no shell, no login on the node), else as a command of its own. No terminal
        either way: control mode's replies must arrive byte for byte."""
        if not self.transport.connected:
            raise HostUnreachable(f"{self.name}: not connected")
        stream = None
        if self._relay is not None:
            stream = await self.transport.open_socket(f"{self.dir}/control.sock")
        if stream is not None:
            reader, self._control = stream
        else:
            proc = await self.transport.spawn(shlex.join(self.tmux_argv(*self._attach_args())))
            reader, self._control = proc.stdout, proc
        client = ControlClient(reader, self._control, on_event)
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
        return self.transport.terminal_argv(
            shlex.join(
                self.tmux_argv(
                    "select-window", "-t", window, ";", "attach-session", "-t", f"={self.session}"
                )
            )
        )

    async def kill_server(self) -> None:
        await kill_server(self)
