"""A client meets an engine whose listen queue is full (busy, or flooded by idle
connections): it waits in the kernel's line for room, for CONNECT_RETRY seconds, and then
says so in one line; it neither gives up at once nor polls."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui import client


@pytest.fixture
def full_queue(tmp_path: Path) -> Iterator[tuple[Path, socket.socket]]:
    """A listener that accepts nothing, its queue filled by connections that never ask."""
    path = tmp_path / "e.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    held = []
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(str(path))
        except BlockingIOError:
            s.close()
            break
        held.append(s)
    yield path, listener
    for s in held:
        s.close()
    listener.close()


def test_a_full_queue_is_waited_for_until_the_engine_takes_one(full_queue) -> None:
    path, listener = full_queue
    taken: list[socket.socket] = []
    accepting = threading.Timer(0.4, lambda: taken.append(listener.accept()[0]))
    accepting.start()
    started = time.monotonic()
    sock = client._connect(path, timeout=1.0)
    took = time.monotonic() - started
    accepting.join()
    try:
        assert 0.3 < took < client.CONNECT_RETRY, f"connected after {took:.2f} s"
        assert sock.gettimeout() == 1.0 + client.ANSWER_GRACE  # the request's own deadline
    finally:
        sock.close()
        for s in taken:
            s.close()


def test_a_queue_that_stays_full_is_one_clear_line(full_queue, monkeypatch) -> None:
    path, _ = full_queue
    monkeypatch.setattr(client, "CONNECT_RETRY", 0.5)
    started = time.monotonic()
    with pytest.raises(client.ClientError) as caught:
        client._connect(path, timeout=1.0)
    took = time.monotonic() - started
    assert 0.45 < took < 1.5, f"gave up after {took:.2f} s"
    message = str(caught.value)
    assert "\n" not in message and "did not take the connection" in message
    assert "nothing was sent" in message
