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

Threads, not asyncio: every node's set-up starts this file, and on a busy node importing
asyncio (ssl, logging, concurrent.futures) cost more than the relay does all night.

Usage: relay.py SOCKET TMUX_ARGV_JSON [OPTIONS_JSON]
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

MAX_REQUEST = 4 * 1024 * 1024  # as the engine's own socket
REQUEST_WAIT = 10.0  # seconds a client has to send its request line
MAX_OPEN = 256  # connections at once
LOOK_EVERY = 1.0  # seconds between looks at whether a client still waits for its answer
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


def hung_up(conn: socket.socket) -> bool:
    """The client closed its end of the connection."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def spawn(target: Any, *args: Any) -> None:
    threading.Thread(target=target, args=args, daemon=True).start()


class Answer:
    """The engine's reply to one request, waited for by the client's thread."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.text = ""


class Relay:
    def __init__(self, path: str, tmux: list[str]):
        self.path, self.tmux = path, tmux
        self.waiting: dict[int, Answer] = {}
        self.next_id = 0
        self.open = 0  # connections being served
        self.lock = threading.Lock()  # the counters, `waiting` and standard output
        self.out = sys.stdout.buffer

    def emit(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame).encode() + b"\n"
        with self.lock:
            try:
                self.out.write(data)
                self.out.flush()
            except OSError:
                pass  # the engine went: standard input ends too, and the relay with it

    def agent_of(self, pid: int) -> str:
        """The agent whose pane `pid` descends from, or "" (not inside any agent's pane)."""
        if pid <= 0:
            return ""
        try:
            out = subprocess.run(
                [*self.tmux, "list-panes", "-a", "-F", PANES],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                timeout=REQUEST_WAIT,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
        panes = dict(
            ln.split("|", 1) for ln in out.decode(errors="replace").splitlines() if "|" in ln
        )
        for ancestor in ancestors(pid):
            name = panes.get(str(ancestor))
            if name:
                return name
        return ""

    def accept(self, listener: socket.socket) -> None:
        """The fleet socket: a thread per connection, at most MAX_OPEN at once."""
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed: the relay is ending
            with self.lock:
                full = self.open >= MAX_OPEN
                if not full:
                    self.open += 1
            if full:
                refuse = {
                    "ok": False,
                    "error": f"the node's relay has {MAX_OPEN} requests open: try again",
                }
                try:
                    conn.settimeout(1.0)
                    conn.sendall(json.dumps(refuse).encode() + b"\n")
                except OSError:
                    pass
                conn.close()
                continue
            spawn(self.client, conn)

    def client(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(REQUEST_WAIT)
            with conn.makefile("rb") as stream:
                line = stream.readline(MAX_REQUEST + 1)
            if len(line) > MAX_REQUEST:
                raise ValueError(f"the request is over {MAX_REQUEST} bytes")
            if not line.strip():
                return
            agent = self.agent_of(peer_pid(conn))
            answer = Answer()
            with self.lock:
                self.next_id += 1
                rid = self.next_id
                self.waiting[rid] = answer
            try:
                self.emit({"id": rid, "agent": agent, "line": line.decode("utf-8", "replace")})
                # the engine answers, or hangs up and the relay ends; a client that gave
                # up waiting frees its place (else each one held it for the whole night)
                while not answer.ready.wait(LOOK_EVERY):
                    if hung_up(conn):
                        return
            finally:
                with self.lock:
                    self.waiting.pop(rid, None)
            conn.settimeout(REQUEST_WAIT)
            conn.sendall(answer.text.encode() + b"\n")
        except ValueError as exc:
            try:
                conn.sendall(json.dumps({"ok": False, "error": str(exc)}).encode() + b"\n")
            except OSError:
                pass
        except OSError:  # the client left, or sent nothing in time
            pass
        finally:
            conn.close()
            with self.lock:
                self.open -= 1

    def gpus(self, argv: list[str], every: float) -> None:
        """nvidia-smi's reading every `every` seconds, to the engine."""
        if not argv or shutil.which(argv[0]) is None:
            self.emit({"gpus": None})
            return
        tick = threading.Event()  # never set: a timer
        while True:
            text = ""
            try:
                done = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    timeout=10,
                )
                text = done.stdout.decode(errors="replace") if done.returncode == 0 else ""
            except (OSError, subprocess.SubprocessError):
                pass
            self.emit({"gpus": text})
            tick.wait(every)

    def controls(self, listener: socket.socket, argv: list[str]) -> None:
        """Each connection becomes a tmux control client's standard input and output."""
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                proc = subprocess.Popen(
                    [*self.tmux, *argv],
                    stdin=conn.fileno(),
                    stdout=conn.fileno(),
                    stderr=subprocess.DEVNULL,
                )
                spawn(proc.wait)  # reaped when it ends
            except OSError:
                pass
            finally:
                conn.close()  # tmux has it now

    def answers(self) -> None:
        """Answers from the engine, until it hangs up."""
        for line in sys.stdin.buffer:
            try:
                frame = json.loads(line)
                rid = int(frame["id"])
                text = json.dumps(frame["reply"])
            except (ValueError, KeyError, TypeError):
                continue
            with self.lock:
                answer = self.waiting.get(rid)
            if answer is not None and not answer.ready.is_set():
                answer.text = text
                answer.ready.set()

    def run(self, options: dict[str, Any]) -> None:
        control: dict[str, Any] = options.get("control") or {}
        old = os.umask(0o177)
        try:
            server = listen(fresh(self.path))
            listener = listen(fresh(home(control["path"]))) if control else None
        finally:
            os.umask(old)
        mine = [(s.getsockname(), os.stat(s.getsockname()).st_ino) for s in (server, listener) if s]
        self.emit({"ready": True})
        spawn(self.accept, server)
        if options.get("gpu"):
            spawn(self.gpus, options["gpu"], options["every"])
        if listener is not None:
            spawn(self.controls, listener, [home(a) for a in control["argv"]])
        try:
            self.answers()
        finally:
            for path, inode in mine:
                try:  # a relay left over from a cut link must not remove its successor's
                    if os.stat(path).st_ino == inode:
                        os.unlink(path)
                except OSError:
                    pass


def listen(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(socket.SOMAXCONN)  # a burst of agents asking at once waits, not refused
    return sock


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
    Relay(home(sys.argv[1]), tmux).run(options)


if __name__ == "__main__":
    main()
