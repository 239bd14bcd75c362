"""The socket's bounds: request size on the encoded bytes, nesting depth, connections per
process and in all, and a log that says a repeated error once per interval."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from swarm_tui.fleet import admission as admission_module
from swarm_tui.fleet.admission import FULL, PER_CLIENT, Admission, RateLimitedLog
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


def test_a_repeated_loop_error_is_one_line_per_interval(capsys: pytest.CaptureFixture[str]) -> None:
    notices: list[str] = []
    log = RateLimitedLog(notices.append, every=3600)
    loop = asyncio.new_event_loop()
    try:
        for _ in range(5000):
            log(
                loop,
                {
                    "message": "socket.accept() out of system resource",
                    "exception": OSError(24, "Too many open files"),
                },
            )
        log(loop, {"message": "another kind"})
    finally:
        loop.close()
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "swarm: socket.accept() out of system resource: [Errno 24] Too many open files",
        "swarm: another kind",
    ]
    assert notices == ["the socket cannot take connections: Too many open files"]
    log.every = 0  # the interval has passed: the next one says how many were left out
    log(
        loop,
        {
            "message": "socket.accept() out of system resource",
            "exception": OSError(24, "Too many open files"),
        },
    )
    assert "(4999 more like it since the last report)" in capsys.readouterr().err


def test_connections_are_bounded_per_process_and_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    admission = Admission(limit=100)
    for _ in range(PER_CLIENT):
        assert admission.admit(4242) == ""
    assert "process 4242 has" in admission.admit(4242)
    assert admission.admit(4343) == ""
    admission.open[0] = 99  # peers unknown (no per-process share), none idle to give way
    assert "connections open, its limit" in admission.admit(4343)
    admission.left(4343)
    admission.left(4343)
    assert 4343 not in admission.open
    monkeypatch.setattr(admission_module.resource, "getrlimit", lambda _: (1024, 4096))
    assert admission_module.max_connections() == 256


async def test_when_full_an_idle_connection_of_the_biggest_holder_makes_room() -> None:
    """A full engine closes the oldest connection that has asked nothing, of the process
    holding the most: a flood's idle connections give way to a `swarm send`, whose own
    connection (one, just opened) is not the one that goes."""
    admission = Admission(limit=4)
    tasks: dict[str, asyncio.Task[None]] = {}

    class Writer:
        def __init__(self) -> None:
            self.said = b""

        def write(self, data: bytes) -> None:
            self.said += data

    writers: dict[str, Writer] = {}

    def connect(name: str, peer: int) -> None:
        assert admission.admit(peer) == ""
        tasks[name] = asyncio.create_task(asyncio.Event().wait())  # type: ignore[arg-type]
        writers[name] = Writer()
        admission.asking(tasks[name], writers[name], peer)

    connect("send", 77)  # a client whose request is on its way
    connect("flood-old", 99)
    connect("flood-new", 99)
    connect("other", 55)
    assert admission.admit(12) == ""  # a newcomer: five open, the limit four
    await asyncio.wait(tasks.values(), timeout=5, return_when=asyncio.FIRST_COMPLETED)
    assert [n for n, t in tasks.items() if t.done()] == ["flood-old"]
    assert tasks["flood-old"].cancelled()
    assert FULL.encode() in writers["flood-old"].said and writers["send"].said == b""
    for name in ("send", "flood-new", "other"):  # every connection has asked
        admission.asked(tasks[name])
    assert "connections open, its limit" in admission.admit(13)
    for task in tasks.values():
        task.cancel()
