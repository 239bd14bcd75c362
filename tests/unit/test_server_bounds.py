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
    server._open[4343] = 100
    assert "connections open, its limit" in server._crowded(4343)
    monkeypatch.setattr(server_module.resource, "getrlimit", lambda _: (1024, 4096))
    assert server_module.max_connections() == 256
