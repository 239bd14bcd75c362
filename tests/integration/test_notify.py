"""Alerts from the engine (no view attached): a JSON POST to the layout's webhook when an
agent starts to wait on a permission prompt, exits, or a host goes down — against a real local
HTTP receiver, including one that answers 500 and one that never answers. The engine is never
slowed: an alert only queues."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from swarm_tui.config.layout import parse_layout
from swarm_tui.config.notify import NotifySpec
from swarm_tui.errors import ConfigError
from swarm_tui.fleet import notify, stalls
from swarm_tui.fleet.notify import Notifier
from swarm_tui.testing import async_wait_until
from swarm_tui.testing.sandbox import mock_agent


class Receiver:
    """A webhook receiver: records every JSON body; answers with the next status in
    `answers` (then 200); `hang` makes it never answer."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.hang = threading.Event()
        self.short = threading.Event()  # says 100 bytes, sends 5 and hangs up
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if receiver.hang.is_set():
                    time.sleep(3)
                    return
                if receiver.short.is_set():
                    receiver.short.clear()
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.write(b"short")
                    self.close_connection = True
                    return
                status = receiver.answers.pop(0) if receiver.answers else 200
                if status == 200:
                    receiver.bodies.append(body)
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def _notifier(url: str, said: list[str], **spec: Any) -> Notifier:
    settings = NotifySpec(webhook=url, desktop=False, **spec)
    return Notifier("night", lambda: settings, said.append, backoff=0.05)


async def test_an_alert_is_posted_as_json_slack_and_ntfy_style(receiver: Receiver) -> None:
    n = _notifier(receiver.url, [])
    task = asyncio.create_task(n.run())
    try:
        n.alert("permission", "Gauss", "Gauss needs you: Bash(rm -rf build)")
        await async_wait_until(lambda: receiver.bodies, 5, "the POST")
        (body,) = receiver.bodies
        assert body["text"] == "swarm night: Gauss needs you: Bash(rm -rf build)"  # Slack
        assert body["message"] == "Gauss needs you: Bash(rm -rf build)"  # ntfy
        assert (body["fleet"], body["kind"], body["subject"]) == ("night", "permission", "Gauss")
    finally:
        task.cancel()


async def test_one_alert_per_subject_and_kind_in_the_window(receiver: Receiver) -> None:
    n = _notifier(receiver.url, [], every=60)
    task = asyncio.create_task(n.run())
    try:
        for _ in range(50):  # an agent flapping in and out of a prompt
            n.alert("permission", "Gauss", "Gauss needs you")
        n.alert("exited", "Gauss", "Gauss exited")  # another kind
        n.alert("permission", "Hilbert", "Hilbert needs you")  # another agent
        await async_wait_until(
            lambda: len(receiver.bodies) == 3, 5, "three POSTs", lambda: repr(receiver.bodies)
        )
        assert sorted((b["kind"], b["subject"]) for b in receiver.bodies) == [
            ("exited", "Gauss"),
            ("permission", "Gauss"),
            ("permission", "Hilbert"),
        ]
    finally:
        task.cancel()


async def test_a_receiver_that_answers_500_gets_it_again(receiver: Receiver) -> None:
    said: list[str] = []
    receiver.answers = [500, 500]
    n = _notifier(receiver.url, said)
    task = asyncio.create_task(n.run())
    try:
        n.alert("host", "node01", "host node01 is down: connection lost")
        await async_wait_until(lambda: receiver.bodies, 5, "the POST after two 500s")
        assert len(said) == 1 and "webhook failed" in said[0]  # said once, not per try
    finally:
        task.cancel()


async def test_a_receiver_that_hangs_never_slows_the_engine(
    receiver: Receiver, monkeypatch
) -> None:
    monkeypatch.setattr(notify, "POST_TIMEOUT", 0.3)
    receiver.hang.set()
    said: list[str] = []
    n = _notifier(receiver.url, said)
    task = asyncio.create_task(n.run())
    try:
        start = time.monotonic()
        for i in range(300):  # more than the queue holds: the oldest go
            n.alert("permission", f"A{i:03d}", f"A{i:03d} needs you")
        assert time.monotonic() - start < 0.1  # queued, never waited on
        ticks = 0
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # the loop stays free while POSTs time out
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks > 50
        await async_wait_until(lambda: said, 5, "the failing webhook said")
        assert receiver.bodies == []
    finally:
        task.cancel()


async def test_a_reply_that_is_not_http_is_one_failed_try(receiver: Receiver) -> None:
    receiver.short.set()
    said: list[str] = []
    n = _notifier(receiver.url, said)
    task = asyncio.create_task(n.run())
    try:
        n.alert("exited", "Gauss", "Gauss exited")
        await async_wait_until(lambda: receiver.bodies, 5, "the alert on the second try")
        assert not task.done() and said and "trying again" in said[0]
    finally:
        task.cancel()


async def test_an_alert_no_receiver_takes_is_dropped_and_said() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    said: list[str] = []
    n = _notifier(f"http://127.0.0.1:{port}/hook", said)
    task = asyncio.create_task(n.run())
    try:
        n.alert("host", "node01", "host node01 is down")
        await async_wait_until(
            lambda: any("dropped" in line for line in said),
            10,
            "the dropped alert said",
            lambda: repr(said),
        )
        assert len(said) == 2  # one "trying again" a minute, and the drop
    finally:
        task.cancel()


def test_a_bad_webhook_is_one_line_naming_the_field(tmp_path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\nnotify = { webhook = "hooks.example/x" }\n'
        '[[agents]]\nname = "A"\ncli = "mock"\n'
    )
    with pytest.raises(ConfigError) as exc:
        parse_layout(path, path.read_text())
    assert "notify.webhook" in str(exc.value) and "http://" in str(exc.value)


async def test_the_engine_posts_when_an_agent_waits_on_a_prompt(
    sandbox, start_fleet, receiver: Receiver
) -> None:
    layout = sandbox.layout(
        "alerts",
        mock_agent("Pat", "--permission-rate", "1", "--work", "1"),
        notify={"webhook": receiver.url, "desktop": False},
    )
    run = await start_fleet(layout, visible=False)  # no view: the engine alone says it
    await run.wait_states("idle", timeout=30)
    run.fleet.send(["Pat"], "deploy it")
    await async_wait_until(
        lambda: any(b["kind"] == "permission" for b in receiver.bodies),
        30,
        "the permission alert",
        run.screens,
    )
    alert = next(b for b in receiver.bodies if b["kind"] == "permission")
    assert alert["subject"] == "Pat" and alert["fleet"] == "alerts"
    assert alert["message"].startswith("Pat needs you")


async def test_what_came_inside_the_window_is_said_at_its_end(receiver: Receiver) -> None:
    """Coalescing never swallows the last word: one trailing alert when the window ends."""
    now = [1000.0]
    settings = NotifySpec(webhook=receiver.url, desktop=False, every=60)
    n = Notifier("night", lambda: settings, [].append, clock=lambda: now[0], backoff=0.05)
    task = asyncio.create_task(n.run())
    try:
        n.alert("permission", "Gauss", "Gauss needs you: Bash(ls)")
        for question in ("Bash(make)", "Bash(make test)", "Bash(rm -rf build)"):
            now[0] += 10
            n.alert("permission", "Gauss", f"Gauss needs you: {question}")
        await async_wait_until(lambda: receiver.bodies, 5, "the first POST")
        now[0] += 30  # the window is over: the engine's own loop sends what it held
        await async_wait_until(
            lambda: len(receiver.bodies) == 2, 5, "the trailing POST", lambda: repr(receiver.bodies)
        )
        assert receiver.bodies[1]["message"] == "3 more: Gauss needs you: Bash(rm -rf build)"
        assert receiver.bodies[1]["kind"] == "permission"
    finally:
        task.cancel()


async def test_an_agent_already_waiting_when_the_engine_starts_is_alerted(
    sandbox, start_fleet, receiver: Receiver
) -> None:
    layout = sandbox.layout(
        "waiting",
        mock_agent("Pat", "--permission-rate", "1", "--work", "1", prompt="deploy it"),
        notify={"webhook": receiver.url, "desktop": False},
    )
    first = await start_fleet(layout, visible=False)
    await async_wait_until(
        lambda: any(b["kind"] == "permission" for b in receiver.bodies),
        30,
        "the permission alert",
        first.screens,
    )
    await first.stop()  # the agent keeps waiting on its prompt in tmux
    receiver.bodies.clear()
    again = await start_fleet(layout, visible=False)
    assert again.fleet.created == []
    await async_wait_until(
        lambda: receiver.bodies, 30, "the alert of the new engine", again.screens
    )
    (alert,) = receiver.bodies
    assert alert["kind"] == "permission" and alert["subject"] == "Pat"


async def test_the_engine_posts_a_verdict(sandbox, start_fleet, receiver: Receiver) -> None:
    worker = mock_agent(
        "Wes",
        "--claims-done",
        tasks=[{"spec": "Build the thing\nwith tests", "review_on_idle": False}],
    )
    layout = sandbox.layout(
        "verdicts",
        worker,
        mock_agent("Jude", "--work", "0.3", role="judge"),
        notify={"webhook": receiver.url, "desktop": False},
    )
    run = await start_fleet(layout, visible=False)
    await async_wait_until(
        lambda: any(b["kind"] == "verdict" for b in receiver.bodies),
        40,
        "the verdict alert",
        run.screens,
    )
    alert = next(b for b in receiver.bodies if b["kind"] == "verdict")
    tid = run.store.tasks("Wes")[0].id
    assert alert["subject"] == "Wes"
    assert alert["message"] == f"Wes's task #{tid} is complete (Jude): Build the thing"


async def test_the_engine_posts_a_stall_once(
    sandbox, start_fleet, receiver: Receiver, monkeypatch
) -> None:
    monkeypatch.setattr(stalls, "TICK", 0.2)
    worker = mock_agent("Ida", tasks=[{"spec": "Port the parser", "review_on_idle": False}])
    layout = sandbox.layout(
        "stall",
        worker,
        notify={"webhook": receiver.url, "desktop": False, "stall_after": "10s", "every": 1},
    )
    run = await start_fleet(layout, visible=False)
    ticks = [0]
    tick = run.fleet.stalls.tick

    def counted() -> list[str]:
        ticks[0] += 1
        return tick()

    monkeypatch.setattr(run.fleet.stalls, "tick", counted)
    await async_wait_until(
        lambda: any(b["kind"] == "stall" for b in receiver.bodies),
        40,
        "the stall alert",
        run.screens,
    )
    ida = run.fleet.agents["Ida"]
    assert ida.state.value == "idle"
    assert ida.stalled.startswith("idle for ") and ida.stalled.endswith(
        "with its task open: Port the parser"
    )
    assert ida.summary()["stalled"] == ida.stalled  # what the views are sent
    seen = ticks[0]
    await async_wait_until(lambda: ticks[0] >= seen + 10, 10, "ten more looks")
    (alert,) = [b for b in receiver.bodies if b["kind"] == "stall"]  # once per stall
    assert alert["subject"] == "Ida" and alert["message"].startswith("Ida stalled: idle for")
