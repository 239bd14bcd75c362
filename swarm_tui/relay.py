"""The node relay: the engine's socket on a remote node, where the node's kernel says who asks.

swarm copies this file to each node and runs it over the SSH connection (stdlib only). It
listens on the node's fleet socket (0600 in a 0700 directory) in place of a plain SSH
forward, so a request from a node is attributed as one on the engine's own machine is: the
socket's peer pid (`SO_PEERCRED`) is walked up to the pane of an agent in the fleet's tmux
server on that node, whatever `SWARM_TOKEN` the process has or lacks. Each request goes to
the engine as one line on standard output, `{"id": N, "agent": NAME or "", "line": REQUEST}`;
the engine answers on standard input with `{"id": N, "reply": ANSWER}`. When standard input
closes (the engine or the link went away) the relay removes its socket and exits.

Usage: relay.py SOCKET TMUX_ARGV_JSON
"""

from __future__ import annotations

import asyncio
import json
import os
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

    async def agent_of(self, pid: int) -> str:
        """The agent whose pane `pid` descends from, or "" (not inside any agent's pane)."""
        if pid <= 0:
            return ""
        proc = await asyncio.create_subprocess_exec(
            *self.tmux, "list-panes", "-a", "-F", PANES, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
        out, _ = await proc.communicate()
        panes = dict(ln.split("|", 1) for ln in out.decode(errors="replace").splitlines()
                     if "|" in ln)
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

    async def run(self) -> None:
        if os.path.exists(self.path):
            os.unlink(self.path)
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self.client, self.path, limit=MAX_REQUEST)
        finally:
            os.umask(old)
        mine = os.stat(self.path).st_ino
        self.out.write(b'{"ready": true}\n')
        self.out.flush()
        try:
            await self.answers()
        finally:
            server.close()
            try:  # a relay left over from a cut link must not remove its successor's socket
                if os.stat(self.path).st_ino == mine:
                    os.unlink(self.path)
            except OSError:
                pass


def main() -> None:
    # "~/..." in tmux's command line: the node's home (the engine learns it in the same
    # command that starts the relay)
    tmux = [os.path.expanduser(a) if a.startswith("~/") else a for a in json.loads(sys.argv[2])]
    path = sys.argv[1]
    asyncio.run(Relay(path, tmux).run())


if __name__ == "__main__":
    main()
