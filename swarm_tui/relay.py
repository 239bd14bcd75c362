"""The node relay: the engine's socket on a remote node, where the node's kernel says who asks.

swarm copies this file to each node and runs it over the SSH connection (stdlib only). It
listens on the node's fleet socket (0600 in a 0700 directory) in place of a plain SSH
forward, so a request from a node is attributed as one on the engine's own machine is: the
socket's peer pid (`SO_PEERCRED`) is walked up to the pane of an agent in the fleet's tmux
server on that node, whatever `SWARM_TOKEN` the process has or lacks. Each request goes to
the engine as one line on standard output, `{"id": N, "agent": NAME or "", "line": REQUEST}`;
the engine answers on standard input with `{"id": N, "reply": ANSWER}`. When standard input
closes (the engine or the link went away) the relay removes its socket and exits.

OPTIONS_JSON may ask for more, so the engine needs no shell on the node (an SSH session and
a login shell each) beyond the one that runs the relay:
  "gpu": [argv], "every": S   nvidia-smi's reading every S seconds, written on standard
                              output as `{"gpus": CSV}` (`{"gpus": null}` once where there is
                              no nvidia-smi);
  "control": {"path": P, "argv": [args]}
                              a socket at P (0600): each connection to it becomes the
                              standard input and output of `tmux ARGS` (the engine's
                              control-mode client, reached by an SSH stream to the socket).
Paths and arguments starting with "~/" are in the node's home.

Usage: relay.py SOCKET TMUX_ARGV_JSON [OPTIONS_JSON]
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import struct
import sys
from typing import Any

MAX_REQUEST = 4 * 1024 * 1024  # as the engine's own socket
REQUEST_WAIT = 10.0  # seconds a client has to send its request line
MAX_OPEN = 256  # connections waiting for an answer at once
PANES = "#{pane_pid}|#{@swarm_agent}"


def peer_pid(sock: Any) -> int:
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return 0
    return int(struct.unpack("3i", raw)[0])


def ancestors(pid: int) -> list[int]:
    """`pid` and its parents up to init, nearest first (from /proc)."""
    chain: list[int] = []
    while pid > 1 and pid not in chain and len(chain) < 256:
        chain.append(pid)
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            break
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return chain


class Relay:
    def __init__(self, path: str, tmux: list[str]):
        self.path, self.tmux = path, tmux
        self.waiting: dict[int, asyncio.Future[str]] = {}
        self.next_id = 0
        self.out = sys.stdout.buffer
        self.children: set[asyncio.Future[int]] = set()  # control clients, reaped as they end

    async def agent_of(self, pid: int) -> str:
        """The agent whose pane `pid` descends from, or "" (not inside any agent's pane)."""
        if pid <= 0:
            return ""
        proc = await asyncio.create_subprocess_exec(
            *self.tmux,
            "list-panes",
            "-a",
            "-F",
            PANES,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await proc.communicate()
        panes = dict(
            ln.split("|", 1) for ln in out.decode(errors="replace").splitlines() if "|" in ln
        )
        for ancestor in ancestors(pid):
            name = panes.get(str(ancestor))
            if name:
                return name
        return ""

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if len(self.waiting) >= MAX_OPEN:
                raise ValueError(f"the node's relay has {MAX_OPEN} requests open: try again")
            try:
                line = await asyncio.wait_for(reader.readline(), REQUEST_WAIT)
            except TimeoutError:
                return
            except (ValueError, asyncio.LimitOverrunError):
                raise ValueError(f"the request is over {MAX_REQUEST} bytes") from None
            if not line.strip():
                return
            agent = await self.agent_of(peer_pid(writer.get_extra_info("socket")))
            self.next_id += 1
            rid = self.next_id
            answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self.waiting[rid] = answer
            try:
                frame = {"id": rid, "agent": agent, "line": line.decode("utf-8", "replace")}
                self.out.write(json.dumps(frame).encode() + b"\n")
                self.out.flush()
                reply = await answer
            finally:
                self.waiting.pop(rid, None)
            writer.write(reply.encode() + b"\n")
            await writer.drain()
        except ValueError as exc:
            writer.write(json.dumps({"ok": False, "error": str(exc)}).encode() + b"\n")
        except (OSError, ConnectionError):
            pass
        finally:
            writer.close()

    def emit(self, frame: dict[str, Any]) -> None:
        self.out.write(json.dumps(frame).encode() + b"\n")
        self.out.flush()

    async def gpus(self, argv: list[str], every: float) -> None:
        """nvidia-smi's reading every `every` seconds, to the engine."""
        if not argv or shutil.which(argv[0]) is None:
            self.emit({"gpus": None})
            return
        while True:
            text = ""
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                try:
                    out, _ = await asyncio.wait_for(proc.communicate(), 10)
                    text = out.decode(errors="replace") if proc.returncode == 0 else ""
                except asyncio.TimeoutError:  # noqa: UP041 - a node may run Python < 3.11
                    proc.kill()
            except OSError:
                pass
            self.emit({"gpus": text})
            await asyncio.sleep(every)

    async def answers(self) -> None:
        """Answers from the engine, until it hangs up."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_REQUEST)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            try:
                frame = json.loads(line)
                answer = self.waiting.get(int(frame["id"]))
            except (ValueError, KeyError, TypeError):
                continue
            if answer is not None and not answer.done():
                answer.set_result(json.dumps(frame["reply"]))

    async def controls(self, listener: socket.socket, argv: list[str]) -> None:
        """Each connection becomes a tmux control client's standard input and output."""
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(listener)
            try:
                conn.setblocking(True)
                proc = await asyncio.create_subprocess_exec(
                    *self.tmux,
                    *argv,
                    stdin=conn.fileno(),
                    stdout=conn.fileno(),
                    stderr=asyncio.subprocess.DEVNULL,
                )
                reaped = asyncio.ensure_future(proc.wait())
                self.children.add(reaped)
                reaped.add_done_callback(self.children.discard)
            except OSError:
                pass
            finally:
                conn.close()  # tmux has it now

    async def run(self, options: dict[str, Any]) -> None:
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(
                self.client, fresh(self.path), limit=MAX_REQUEST
            )
            control: dict[str, Any] = options.get("control") or {}
            listener = None
            if control:
                listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                listener.bind(fresh(home(control["path"])))
                listener.listen(16)
                listener.setblocking(False)
        finally:
            os.umask(old)
        mine = [
            (p, os.stat(p).st_ino)
            for p in (self.path, *([home(control["path"])] if listener else []))
        ]
        self.emit({"ready": True})
        tasks = []
        if options.get("gpu"):
            tasks.append(asyncio.ensure_future(self.gpus(options["gpu"], options["every"])))
        if listener is not None:
            tasks.append(
                asyncio.ensure_future(self.controls(listener, [home(a) for a in control["argv"]]))
            )
        try:
            await self.answers()
        finally:
            for task in tasks:
                task.cancel()
            server.close()
            if listener is not None:
                listener.close()
            for path, inode in mine:
                try:  # a relay left over from a cut link must not remove its successor's
                    if os.stat(path).st_ino == inode:
                        os.unlink(path)
                except OSError:
                    pass


def home(arg: str) -> str:
    return os.path.expanduser(arg) if arg.startswith("~/") else arg


def fresh(path: str) -> str:
    """`path`, with whatever was left there removed (a socket of an earlier relay)."""
    if os.path.exists(path):
        os.unlink(path)
    return path


def main() -> None:
    # "~/...": the node's home (the engine learns it in the command that starts the relay)
    tmux = [home(a) for a in json.loads(sys.argv[2])]
    options = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    asyncio.run(Relay(home(sys.argv[1]), tmux).run(options))


if __name__ == "__main__":
    main()
