"""Watchers attach to the engine over its socket: a snapshot, then a stream of changes; each
shows its own agents; what one does, the others see; one that stops reading is dropped
without slowing the rest; an old protocol version is refused in one line."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from swarm_tui import paths
from swarm_tui.protocol.client import FleetClient, NullViewListener, Refused
from swarm_tui.protocol.models import VERSION
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


class Heard(NullViewListener):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.messages: list[tuple[int, str]] = []
        self.screens: set[str] = set()

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def message_changed(self, message) -> None:  # type: ignore[no-untyped-def]
        self.messages.append((message.id, message.status))

    def screen_changed(self, name: str) -> None:
        self.screens.add(name)


@pytest.fixture
async def run(sandbox, start_fleet):
    running = await start_fleet(
        sandbox.layout("watch", mock_agent("Ada"), mock_agent("Bo")), visible=False
    )
    running.fleet.listener = running.server.watchers
    await running.wait_states("idle")
    return running


async def test_two_watchers_see_each_other_and_only_their_screens(run) -> None:
    sock = paths.socket_path("watch")
    one, two = FleetClient(sock, Heard()), FleetClient(sock, Heard())
    view1 = await one.connect(visible=["Ada"])
    view2 = await two.connect(visible=["Bo"])
    try:
        assert list(view1.agents) == ["Ada", "Bo"] and view1.fleet == "watch"
        assert view1.messages == []
        assert view1.agents["Ada"].state == "idle"
        await async_wait_until(
            lambda: "Ada" in view1.screens and "Bo" in view2.screens, 10, "each watcher's screens"
        )
        assert "Bo" not in view1.screens and "Ada" not in view2.screens
        assert run.fleet.screens._visible == {"Ada", "Bo"}  # the union is read fast

        await one.set_focus("Bo", "from watcher one")
        await async_wait_until(
            lambda: view2.agents["Bo"].focus == "from watcher one",
            5,
            "watcher two to see watcher one's focus edit",
        )
        sent = await two.send(["Ada"], "hello from two")
        await async_wait_until(
            lambda: (sent[0].id, "delivered") in one.listener.messages,
            20,
            "watcher one to hear the delivery",
        )
        assert [(m.id, m.status) for m in view1.messages] == [(sent[0].id, "delivered")]
        three = FleetClient(sock)
        later = await three.connect()  # a watcher that comes later gets it in its snapshot
        await three.close()
        assert [(m.text, m.status) for m in later.messages] == [("hello from two", "delivered")]
        await async_wait_until(
            lambda: any("hello from two" in ln for ln in view1.screens.get("Ada", [])),
            10,
            "Ada's screen to show it to the watcher that shows Ada",
        )
        await one.close()
        await async_wait_until(
            lambda: run.fleet.screens._visible == {"Bo"},
            5,
            "the engine to stop reading Ada fast once nobody shows it",
        )
        two.set_visible({"Ada", "Bo"})
        await async_wait_until(lambda: "Ada" in view2.screens, 5, "Ada's screen at once")
    finally:
        await one.close()
        await two.close()


async def test_a_watcher_that_stops_reading_is_dropped_and_others_go_on(run) -> None:
    sock = paths.socket_path("watch")
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(str(sock))
    stuck.sendall(
        json.dumps({"op": "watch", "version": VERSION, "visible": ["Ada", "Bo"]}).encode() + b"\n"
    )
    live = FleetClient(sock, Heard())
    view = await live.connect(visible=["Ada"])
    try:
        await async_wait_until(lambda: run.server.watchers.count() == 2, 5, "two watchers")
        big = "x" * 200_000
        for i in range(40):  # far more than the stuck one's buffers hold
            run.server.watchers.notice(f"{i} {big}")
        await async_wait_until(
            lambda: run.server.watchers.count() == 1,
            15,
            "the watcher that stopped reading to be dropped",
        )
        started = time.monotonic()
        await live.set_focus("Ada", "still answering")
        await async_wait_until(
            lambda: view.agents["Ada"].focus == "still answering", 5, "the live watcher to go on"
        )
        assert time.monotonic() - started < 2
    finally:
        stuck.close()
        await live.close()


async def test_an_old_protocol_version_is_refused_in_one_line(run) -> None:
    reader, writer = await asyncio.open_unix_connection(str(paths.socket_path("watch")))
    writer.write(json.dumps({"op": "watch", "version": VERSION + 41}).encode() + b"\n")
    reply = json.loads(await asyncio.wait_for(reader.readline(), 5))
    writer.close()
    assert reply["ok"] is False
    assert f"protocol version {VERSION + 41}" in reply["error"]
    assert f"version {VERSION}" in reply["error"] and "\n" not in reply["error"]
    client = FleetClient(paths.socket_path("watch"))
    client_view = await client.connect()
    await client.close()
    assert client_view.engine_pid > 0
    with pytest.raises(Refused, match="no agent named 'Nobody'"):
        await client.attach_argv("Nobody")
