"""A listener that logs the fleet's changes as lines, for `swarm up --headless`."""

from __future__ import annotations

import time
from typing import TextIO

from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import Message


class LogListener:
    def __init__(self, out: TextIO):
        self.out = out
        self._last: dict[str, str] = {}

    def _line(self, text: str) -> None:
        self.out.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        self.out.flush()

    def agent_changed(self, agent: Agent) -> None:
        if self._last.get(agent.name) != agent.state.value:
            self._last[agent.name] = agent.state.value
            extra = f": {agent.tracker.reading.question}" if agent.tracker.reading.question else ""
            self._line(f"{agent.name} {agent.state.value}{extra}")

    def screen_changed(self, agent: Agent) -> None:
        pass

    def message_changed(self, message: Message) -> None:
        self._line(
            f"message #{message.id} {message.sender} → {message.recipient}: {message.status}"
        )

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        self._line(f"host {host} {'connected' if connected else 'down: ' + detail}")

    def notice(self, text: str) -> None:
        self._line(text)

    def layout_changed(self) -> None:
        pass

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        pass  # the notice that follows says it


class StartProgress:
    """While a fleet comes up: one line per host as it connects or fails (on stderr, before
    the UI takes the terminal)."""

    def __init__(self, out: TextIO, hosts: list[str]):
        self.out = out
        self.pending = set(hosts)
        self.quiet = hosts == ["local"]  # one local host: nothing worth a progress line
        if len(hosts) > 1:
            self.out.write(f"swarm: connecting to {len(hosts)} hosts: {', '.join(hosts)}\n")
            self.out.flush()

    def agent_changed(self, agent: Agent) -> None:
        pass

    def screen_changed(self, agent: Agent) -> None:
        pass

    def message_changed(self, message: Message) -> None:
        pass

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        self.pending.discard(host)
        if self.quiet and connected:
            return
        state = "up" if connected else f"DOWN ({detail}); retrying in the background"
        left = f" [{len(self.pending)} to go]" if self.pending else ""
        self.out.write(f"swarm: {host} {state}{left}\n")
        self.out.flush()

    def notice(self, text: str) -> None:
        self.out.write(f"swarm: {text}\n")
        self.out.flush()

    def layout_changed(self) -> None:
        pass

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        pass  # the notice that follows says it
