"""Telling the human when an agent needs them: the terminal bell and a desktop notification
(OSC 9 and OSC 777, which terminals that do not know them ignore), for an agent that waits on
a permission prompt (also one already waiting when the view opens), a verdict of the judge,
an agent the engine marks stalled, one that exits, a host that goes down. The kinds that ring
are the layout's `[notify] bell`. One alert per agent (or host) per kind per `every`
seconds, and one trailing alert at the window's end for what came inside it ("3 more: …"),
so a fleet of 128 never floods and the last word is never lost."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from swarm_tui.config.notify import Coalescer, Kind, stall_text, verdict_text
from swarm_tui.protocol.client import FleetView
from swarm_tui.protocol.models import AgentView, HostView, NotifyView

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")  # nothing that could end or split the sequence


def osc_notify(title: str, body: str) -> str:
    """A desktop notification as escape sequences: OSC 9 (iTerm2, WezTerm, Windows
    Terminal, kitty) and OSC 777 (VTE terminals, foot); both end with BEL."""
    title, body = _UNSAFE.sub(" ", title)[:80], _UNSAFE.sub(" ", body)[:200]
    return f"\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"


class Alerts:
    """Watches the view's agents, hosts and verdicts change; `write` puts the escape
    sequences on the terminal. `settings`: the layout's `[notify]` as the engine said it."""

    def __init__(
        self,
        write: Callable[[str], None],
        settings: Callable[[], NotifyView] = NotifyView,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.write = write
        self._settings = settings
        self._windows = Coalescer(clock)
        self._states: dict[str, str] = {}
        self._stalled: set[str] = set()
        self._hosts: dict[str, bool] = {}
        self._verdicts: set[tuple[int, float, str, str]] | None = None  # None: not yet seen
        self.sent: list[tuple[str, str]] = []  # (subject, what), for the record and tests

    def look(self, view: FleetView) -> None:
        """The whole view: every agent, host and verdict, and trailing alerts now due. Run
        when the view opens and every second: what an event may have missed (a view that
        reconnected) is seen here."""
        for agent in view.agents.values():
            self.agent(agent)
        for host in view.hosts.values():
            self.host(host)
        self.verdicts(view)
        self.release()

    def release(self) -> None:
        """The trailing alert of each window that ended with alerts held in it."""
        for subject, kind, text in self._windows.due(self._settings().every):
            self._ring(kind, subject, text)

    def agent(self, view: AgentView) -> None:
        name = view.name
        before = self._states.get(name)
        self._states[name] = view.state
        if view.stalled and name not in self._stalled:
            self._stalled.add(name)
            self._alert(name, "stall", stall_text(name, view.stalled))
        elif not view.stalled:
            self._stalled.discard(name)  # it moved: a later stall is news again
        if before == view.state:
            return
        if view.state == "needs-permission":  # also when first seen: it waits for a human
            question = f": {view.question}" if view.question else ""
            self._alert(name, "permission", f"{name} needs you{question}")
        elif view.state == "exited" and before is not None:  # gone before the view: old news
            self._alert(name, "exited", f"{name} exited")

    def host(self, view: HostView) -> None:
        before = self._hosts.get(view.name)
        self._hosts[view.name] = view.connected
        if before and not view.connected:
            self._alert(view.name, "host", f"host {view.name} is down: {view.detail}")

    def verdicts(self, view: FleetView) -> None:
        """A verdict the view had not seen: the ones there when it opened are history."""
        work = view.work
        keys = {(v.task, v.time, v.judge, v.verdict): v for v in work.verdicts}
        seen, self._verdicts = self._verdicts, set(keys) | (self._verdicts or set())
        if seen is None:
            return
        tasks = {t.id: t for t in work.tasks}
        for key in sorted(set(keys) - seen, key=lambda k: k[1]):
            v, task = keys[key], tasks.get(key[0])
            if task is not None:
                self._alert(
                    task.agent,
                    "verdict",
                    verdict_text(task.agent, task.id, task.spec, v.verdict, v.judge, v.reasons),
                )

    def _alert(self, subject: str, kind: Kind, what: str) -> None:
        if self._rings(kind):
            text = self._windows.offer(subject, kind, what, self._settings().every)
            if text is not None:
                self._ring(kind, subject, text)

    def _rings(self, kind: Kind) -> bool:
        bell = self._settings().bell
        return bell is None or kind in bell

    def _ring(self, kind: Kind, subject: str, text: str) -> None:
        if not self._rings(kind):
            return
        self.sent.append((subject, text))
        self.write("\x07" + osc_notify("swarm", text))
