"""The socket's bounds: request size on the encoded bytes, nesting depth, connections per
process and in all, and a log that says a repeated error once per interval."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from swarm_tui.fleet import server as server_module
from swarm_tui.fleet.server import PER_CLIENT, FleetServer, RateLimitedLog
from swarm_tui.protocol.requests import MAX_DEPTH, MAX_REQUEST, depth, parse_request


def test_a_request_over_the_limit_in_bytes_is_refused() -> None:
    assert parse_request(json.dumps({"op": "ping"}).encode()) == {"op": "ping"}
    with pytest.raises(ValueError, match="over"):
        parse_request(b"x" * (MAX_REQUEST + 1))


def test_deep_nesting_is_refused_without_recursion() -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert depth(parse_request(ok.encode())) == MAX_DEPTH
    for n in (MAX_DEPTH + 1, 5000, 200_000):  # 200k would overflow json's own recursion
        with pytest.raises(ValueError, match="nests deeper"):
            parse_request(("[" * n + "]" * n).encode())
    deep: Any = {}
    for _ in range(MAX_DEPTH + 5):
        deep = {"k": deep}
    assert depth(deep) > MAX_DEPTH


def test_a_repeated_loop_error_is_one_line_per_interval(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    notices: list[str] = []
    log = RateLimitedLog(notices.append, every=3600)
    loop = asyncio.new_event_loop()
    try:
        for _ in range(5000):
            log(loop, {"message": "socket.accept() out of system resource",
                       "exception": OSError(24, "Too many open files")})
        log(loop, {"message": "another kind"})
    finally:
        loop.close()
    err = capsys.readouterr().err.splitlines()
    assert err == ["swarm: socket.accept() out of system resource: [Errno 24] Too many open "
                   "files", "swarm: another kind"]
    assert notices == ["the socket cannot take connections: Too many open files"]
    log.every = 0  # the interval has passed: the next one says how many were left out
    log(loop, {"message": "socket.accept() out of system resource",
               "exception": OSError(24, "Too many open files")})
    assert "(4999 more like it since the last report)" in capsys.readouterr().err


def test_connections_are_bounded_per_process_and_in_all(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    server = FleetServer(None, tmp_path / "s.sock")  # type: ignore[arg-type]
    server.limit = 100
    server._open[4242] = PER_CLIENT + 1
    assert "process 4242 has" in server._crowded(4242)
    assert server._crowded(4343) == ""
    server._open[0] = 100  # peers unknown (no per-process share), none idle to give way
    assert "connections open, its limit" in server._crowded(4343)
    monkeypatch.setattr(server_module.resource, "getrlimit", lambda _: (1024, 4096))
    assert server_module.max_connections() == 256


async def test_when_full_an_idle_connection_of_the_biggest_holder_makes_room(
        tmp_path: Path) -> None:
    """A full engine closes the oldest connection that has asked nothing, of the process
    holding the most: a flood's idle connections give way to a `swarm send`, whose own
    connection (one, just opened) is not the one that goes."""
    server = FleetServer(None, tmp_path / "s.sock")  # type: ignore[arg-type]
    server.limit = 4
    closed: list[str] = []
    tasks: dict[str, asyncio.Task[None]] = {}

    class Writer:
        def __init__(self, name: str) -> None:
            self.name, self.said = name, b""

        def write(self, data: bytes) -> None:
            self.said += data

    async def idle() -> None:
        await asyncio.Event().wait()

    async def asking(name: str, peer: int) -> Writer:
        task = tasks[name] = asyncio.create_task(idle())
        task.add_done_callback(lambda t: closed.append(name) if t.cancelled() else None)
        writer = Writer(name)
        server._asking[task] = (writer, peer)  # type: ignore[assignment]
        server._open[peer] += 1
        return writer

    sender = await asking("send", 77)  # a client whose request is on its way
    old = await asking("flood-old", 99)
    await asking("flood-new", 99)
    await asking("other", 55)
    server._open[12] += 1  # a newcomer: five open, the limit four
    assert server._crowded(12) == ""
    await asyncio.wait(tasks.values(), timeout=5, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.sleep(0)  # its done callback: scheduled as it ended
    assert closed == ["flood-old"] and sum(t.done() for t in tasks.values()) == 1
    assert b"asked nothing: closed" in old.said and sender.said == b""
    server._asking.clear()  # every connection has asked: nothing can give way
    assert "connections open, its limit" in server._crowded(12)
    for task in tasks.values():
        task.cancel()
