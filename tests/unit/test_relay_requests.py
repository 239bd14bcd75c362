"""The node relay's socket, run as swarm runs it (a real process, stdin and stdout its link to
the engine): each request goes out as a frame and its answer comes back to the one who asked,
however many wait at once and in whatever order the engine answers; what it cannot take gets
one line saying why."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import swarm_tui
from swarm_tui.relay import MAX_OPEN, MAX_REQUEST

RELAY = Path(swarm_tui.__file__).parent / "relay.py"


@dataclass
class Running:
    proc: subprocess.Popen[bytes]
    path: str
    frames: queue.Queue[dict[str, Any]]  # what the relay wrote to the engine, in order

    def frame(self) -> dict[str, Any]:
        return self.frames.get(timeout=20)

    def reply(self, frame: dict[str, Any], reply: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": frame["id"], "reply": reply}).encode() + b"\n")
        self.proc.stdin.flush()


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[Running]:
    path = str(tmp_path / "s.sock")
    proc = subprocess.Popen(
        [sys.executable, str(RELAY), path, json.dumps(["tmux", "-L", f"none-{os.getpid()}"])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    frames: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            frames.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    running = Running(proc, path, frames)
    try:
        assert running.frame() == {"ready": True}
        yield running
    finally:
        proc.kill()
        proc.wait()


def ask(path: str, line: bytes) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)  # blocking: a full backlog waits for the relay to accept
    sock.settimeout(20)
    sock.sendall(line)
    return sock


def answer_of(sock: socket.socket) -> dict[str, object]:
    with sock, sock.makefile("rb") as stream:
        return dict(json.loads(stream.readline()))


def test_answers_reach_who_asked_whatever_their_order(relay: Running) -> None:
    asking = {f"req-{i}": ask(relay.path, f'{{"op": "req-{i}"}}\n'.encode()) for i in range(5)}
    frames = [relay.frame() for _ in asking]
    assert sorted(json.loads(f["line"])["op"] for f in frames) == sorted(asking)
    assert all(f["agent"] == "" for f in frames)  # the test is in no agent's pane
    for frame in reversed(frames):  # answered last first
        relay.reply(frame, {"ok": True, "op": json.loads(frame["line"])["op"]})
    for op, sock in asking.items():
        assert answer_of(sock) == {"ok": True, "op": op}


def test_an_oversized_request_is_refused_in_one_line(relay: Running) -> None:
    reply = answer_of(ask(relay.path, b"x" * (MAX_REQUEST + 10) + b"\n"))
    assert reply == {"ok": False, "error": f"the request is over {MAX_REQUEST} bytes"}


def test_past_its_bound_the_relay_says_so_and_serves_again_after(relay: Running) -> None:
    silent = [ask(relay.path, b"") for _ in range(MAX_OPEN)]  # connected, nothing sent yet
    try:
        reply = answer_of(ask(relay.path, b'{"op": "one too many"}\n'))
        assert reply["ok"] is False and f"{MAX_OPEN} requests open" in str(reply["error"])
    finally:
        for sock in silent:
            sock.close()
    # the silent ones hung up: their threads end and a request is taken again
    deadline = time.monotonic() + 20
    while True:
        sock = ask(relay.path, b'{"op": "again"}\n')
        try:
            frame = relay.frames.get(timeout=0.5)
            break
        except queue.Empty:
            sock.settimeout(0)
            try:
                refused = sock.recv(4096)
            except BlockingIOError:
                refused = b""
            assert refused or time.monotonic() < deadline, "neither taken nor refused"
            assert time.monotonic() < deadline, "still refused after the others hung up"
            sock.close()
    assert json.loads(frame["line"]) == {"op": "again"}
    relay.reply(frame, {"ok": True})
    sock.settimeout(20)
    assert answer_of(sock) == {"ok": True}


def test_clients_that_give_up_waiting_free_their_places(relay: Running) -> None:
    gave_up = [ask(relay.path, f'{{"op": "slow-{i}"}}\n'.encode()) for i in range(MAX_OPEN)]
    for _ in gave_up:
        relay.frame()  # every one of them is with the engine, none answered yet
    for sock in gave_up:
        sock.close()  # (a client's own deadline passed)
    deadline = time.monotonic() + 20
    while True:  # within a look or two the relay takes requests again
        try:
            sock = ask(relay.path, b'{"op": "later"}\n')
        except BrokenPipeError:  # refused and closed before the request was written
            assert time.monotonic() < deadline, "still refused: the ones who left hold it up"
            continue
        try:
            frame = relay.frames.get(timeout=0.5)
            break
        except queue.Empty:
            assert time.monotonic() < deadline, "still refused: the ones who left hold it up"
            sock.close()
    assert json.loads(frame["line"]) == {"op": "later"}
    relay.reply(frame, {"ok": True})
    assert answer_of(sock) == {"ok": True}


def test_a_silent_client_holds_nothing_up(relay: Running) -> None:
    quiet = ask(relay.path, b"")  # connected, never asks
    try:
        asked = ask(relay.path, b'{"op": "meanwhile"}\n')
        frame = relay.frame()
        relay.reply(frame, {"ok": True})
        assert answer_of(asked) == {"ok": True}
    finally:
        quiet.close()


def test_the_engine_hanging_up_ends_the_relay_and_its_socket(relay: Running) -> None:
    assert relay.proc.stdin is not None
    waiting = ask(relay.path, b'{"op": "never answered"}\n')
    assert json.loads(relay.frame()["line"]) == {"op": "never answered"}
    relay.proc.stdin.close()
    assert relay.proc.wait(timeout=10) == 0
    assert not Path(relay.path).exists()
    with waiting, waiting.makefile("rb") as stream:
        assert stream.readline() == b""  # hung up, not left waiting
