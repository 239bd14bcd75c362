"""The view's side of the engine: requests in order, and the link's loss and return.

Every action of the view is a request to the engine, run in a worker (the view keeps
drawing), one at a time. When the engine's stream breaks the view says so on one line and
tries again every RETRY seconds, for as long as it takes; `U` starts the engine again when
this view may (a view over SSH may not: its engine is on another machine).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from rich.text import Text
from textual.app import App
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.widgets import Label

from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
from swarm_tui.ui.bridge import UiBridge

T = TypeVar("T")
RETRY = 2.0  # seconds between attempts to reach an engine that went away


class EngineLink(App[str]):
    """What SwarmApp does with its engine (the app sets these up in its constructor and
    mount)."""

    client: FleetClient
    bridge: UiBridge
    start_engine: Callable[[], None] | None
    _engine_note: Label
    _retry: Timer | None
    _connecting: bool
    _asking: asyncio.Lock

    def _visible_names(self) -> set[str]:
        raise NotImplementedError

    def _note_from_view(self) -> None:
        raise NotImplementedError

    def _ask(
        self,
        call: Callable[[], Awaitable[T]],
        then: Callable[[T], object] | None = None,
        what: str = "",
        severity: SeverityLevel = "error",
    ) -> None:
        """Ask the engine (in a worker: the view keeps drawing meanwhile); `then` gets the
        answer. Requests go one at a time, in the order they were made (two messages typed
        to one agent arrive in that order). A refusal, or no engine, is one notification
        line."""

        async def run() -> None:
            try:
                async with self._asking:
                    answer = await call()
            except (Refused, Unreachable) as exc:
                self.notify(f"{what}: {exc}" if what else str(exc), severity=severity, timeout=10)
                return
            except Exception as exc:  # noqa: BLE001 - shown, never crashes the UI
                self.notify(f"{what or 'request'} failed: {exc!r}", severity="error", timeout=10)
                return
            if then is not None:
                then(answer)

        self.run_worker(run(), group="requests", exit_on_error=False)

    def _lost_line(self, why: str) -> Text:
        offer = ", U starts it again" if self.start_engine is not None else ""
        return Text(f"engine unreachable (retrying{offer}): {why}", overflow="ellipsis")

    def action_start_engine(self) -> None:
        if self.client.connected:
            self.notify("the engine is running", timeout=5)
            return
        if self.start_engine is None:
            self.notify(
                "this view watches an engine on another machine: start it there (`swarm up`)",
                severity="warning",
                timeout=10,
            )
            return
        start = self.start_engine

        async def run() -> None:
            self.notify("starting the engine…", timeout=5)
            try:
                await asyncio.to_thread(start)
            except Exception as exc:  # noqa: BLE001 - said, never crashes the view
                self.notify(f"the engine did not start: {exc}", severity="error", timeout=15)
                return
            self._reconnect()

        self.run_worker(run(), group="start-engine", exit_on_error=False)

    def _engine_lost(self, why: str) -> None:
        """The engine's stream broke: say so on one line, and try again every RETRY s."""
        self._engine_note.update(self._lost_line(why))
        self._engine_note.display = True
        if self._retry is None:
            self._retry = self.set_interval(RETRY, self._reconnect)

    def _reconnect(self) -> None:
        if self._connecting or self.client.connected:
            return
        self._connecting = True
        self.run_worker(self._connect_again(), group="reconnect", exit_on_error=False)

    async def _connect_again(self) -> None:
        try:
            await self.client.connect(self._visible_names())
        except Exception as exc:  # noqa: BLE001 - any failure: said, and tried again
            why = str(exc) or type(exc).__name__
            self._engine_note.update(self._lost_line(why))
            return
        finally:
            self._connecting = False
        if self._retry is not None:
            self._retry.stop()
            self._retry = None
        self.bridge.lost = None
        self._engine_note.display = False
        self._note_from_view()
        self.bridge.relayout = True  # the fresh snapshot, drawn whole on the next frame
        self.bridge.wake()
        self.notify("the engine answers again", timeout=5)
