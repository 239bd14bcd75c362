"""Telling the human when an agent needs them: the terminal bell and a desktop notification
(OSC 9 and OSC 777, which terminals that do not know them ignore), for an agent that starts
to wait on a permission prompt, one that exits, a host that goes down. One alert per agent
(or host) per kind per minute, so a fleet of 128 never floods."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from swarm_tui.protocol.models import AgentView, HostView

COALESCE = 60.0  # seconds: one alert per subject and kind in this window
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")  # nothing that could end or split the sequence


def osc_notify(title: str, body: str) -> str:
    """A desktop notification as escape sequences: OSC 9 (iTerm2, WezTerm, Windows
    Terminal, kitty) and OSC 777 (VTE terminals, foot); both end with BEL."""
    title, body = _UNSAFE.sub(" ", title)[:80], _UNSAFE.sub(" ", body)[:200]
    return f"\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"


class Alerts:
    """Watches the view's agents and hosts change; `write` puts the escape sequences on the
    terminal (None: the bell only, e.g. a browser)."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self.write = write
        self._clock = clock
        self._states: dict[str, str] = {}
        self._hosts: dict[str, bool] = {}
        self._last: dict[tuple[str, str], float] = {}
        self.sent: list[tuple[str, str]] = []  # (subject, what), for the record and tests

    def agent(self, view: AgentView) -> None:
        before = self._states.get(view.name)
        self._states[view.name] = view.state
        if before is None or before == view.state:
            return  # the first sight of an agent is no news
        if view.state == "needs-permission":
            question = f": {view.question}" if view.question else ""
            self._alert(view.name, "permission", f"{view.name} needs you{question}")
        elif view.state == "exited":
            self._alert(view.name, "exited", f"{view.name} exited")

    def host(self, view: HostView) -> None:
        before = self._hosts.get(view.name)
        self._hosts[view.name] = view.connected
        if before and not view.connected:
            self._alert(view.name, "host", f"host {view.name} is down: {view.detail}")

    def _alert(self, subject: str, kind: str, what: str) -> None:
        now = self._clock()
        last = self._last.get((subject, kind))
        if last is not None and now - last < COALESCE:
            return
        self._last[(subject, kind)] = now
        self.sent.append((subject, what))
        self.write("\x07" + osc_notify("swarm", what))
