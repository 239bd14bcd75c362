"""Alerts from the engine, which runs all night with no view attached: a JSON POST to the
layout's webhook and `notify-send` on the engine's machine, when an agent starts to wait on a
prompt (or already waits when the engine starts), the judge gives a verdict, an agent stalls,
an agent's CLI exits, or a host goes down.

Nothing here may slow the engine: `alert` only queues; one task sends, each POST with a
timeout, retried with backoff (a receiver that hangs or answers 500 is tried again, then
dropped), failures said once a minute. One alert per subject and kind per `every` seconds, so
128 agents flapping never flood anyone; what else came in the window is said in one trailing
alert when it ends ("3 more: …")."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from swarm_tui.config.notify import Coalescer, Kind, NotifySpec

POST_TIMEOUT = 10.0  # seconds for one POST
TRIES = 4  # attempts per alert
BACKOFF = 2.0  # seconds before the second attempt; doubles
QUEUE = 200  # alerts waiting to be sent; the oldest go first when more come
SAY_EVERY = 60.0  # seconds between two lines about a failing webhook
RELEASE_EVERY = 1.0  # seconds between looks for trailing alerts whose window has ended


@dataclass(frozen=True)
class Alert:
    kind: Kind
    subject: str  # an agent's or a host's name
    text: str
    at: float


class Notifier:
    def __init__(
        self,
        fleet: str,
        spec: Callable[[], NotifySpec],
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        backoff: float = BACKOFF,
    ):
        """`spec`: the layout's `[notify]` as it is now (a live reload may change it)."""
        self.fleet, self._spec, self._say = fleet, spec, say
        self._clock, self._backoff = clock, backoff
        self._windows = Coalescer(clock)
        self._queue: asyncio.Queue[Alert] = asyncio.Queue(QUEUE)
        self._said = -SAY_EVERY
        self.sent: list[Alert] = []  # delivered to the webhook
        self.muted = False  # the fleet is being stopped on purpose
        self._desktops: set[asyncio.Task[None]] = set()

    @property
    def desktop(self) -> bool:
        return (
            self._spec().desktop
            and shutil.which("notify-send") is not None
            and bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        )

    def alert(self, kind: Kind, subject: str, text: str) -> None:
        """Queue an alert (coalesced); returns at once, whatever the receivers do."""
        spec = self._spec()
        if self.muted or kind not in spec.kinds or not (spec.webhook or self.desktop):
            return
        now_text = self._windows.offer(subject, kind, text, spec.every)
        if now_text is not None:
            self._queue_alert(Alert(kind, subject, now_text, time.time()))

    def release(self) -> None:
        """Queue the trailing alert of each window that has ended with alerts held."""
        spec = self._spec()
        for subject, kind, text in self._windows.due(spec.every):
            if not self.muted and kind in spec.kinds:
                self._queue_alert(Alert(kind, subject, text, time.time()))

    def _queue_alert(self, alert: Alert) -> None:
        if self._queue.full():
            self._queue.get_nowait()  # the oldest goes: the newest says what is true now
        self._queue.put_nowait(alert)

    async def _release_forever(self) -> None:
        while True:
            await asyncio.sleep(RELEASE_EVERY)
            self.release()

    async def run(self) -> None:
        """Send what is queued, one at a time, for as long as the engine runs."""
        releasing = asyncio.create_task(self._release_forever())
        try:
            await self._send_forever()
        finally:
            releasing.cancel()

    async def _send_forever(self) -> None:
        while True:
            alert = await self._queue.get()
            if self.desktop:  # beside the webhook, never behind its retries
                task = asyncio.create_task(self._desktop(alert))
                self._desktops.add(task)
                task.add_done_callback(self._desktops.discard)
            if url := self._spec().webhook:
                await self._post(url, alert)

    async def _post(self, url: str, alert: Alert) -> None:
        body = json.dumps(
            {
                "text": f"swarm {self.fleet}: {alert.text}",
                "message": alert.text,
                "title": f"swarm {self.fleet}",
                "fleet": self.fleet,
                "kind": alert.kind,
                "subject": alert.subject,
                "time": alert.at,
            }
        ).encode()
        delay = self._backoff
        for attempt in range(1, TRIES + 1):
            try:
                await asyncio.to_thread(_post, url, body)
                self.sent.append(alert)
                return
            except Exception as exc:  # noqa: BLE001 - any failure of a receiver: try again
                why = str(getattr(exc, "reason", "") or exc) or type(exc).__name__
                if attempt == TRIES:
                    self._say(
                        f"notify: the webhook did not take an alert after {TRIES} "
                        f"tries ({why}); dropped: {alert.text}"
                    )  # always said
                    return
                self._tell(f"notify: the webhook failed ({why}); trying again")
                await asyncio.sleep(delay)
                delay *= 2

    async def _desktop(self, alert: Alert) -> None:
        try:
            proc = await asyncio.create_subprocess_exec(
                "notify-send",
                f"swarm {self.fleet}",
                alert.text,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()  # a notification daemon that hangs: not one process per alert
                await proc.wait()
        except OSError:
            pass  # a desktop that cannot show it: the webhook and the view still say it

    def _tell(self, line: str) -> None:
        now = self._clock()
        if now - self._said >= SAY_EVERY:
            self._said = now
            self._say(line)


def _post(url: str, body: bytes) -> None:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as reply:  # noqa: S310
        reply.read()
