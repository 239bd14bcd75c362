"""What the engine tells whoever watches it (the UI, the headless logger): plain callbacks."""

from __future__ import annotations

from typing import Protocol

from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import Message


class FleetListener(Protocol):
    def agent_changed(self, agent: Agent) -> None:
        """State, focus, reading or queue length changed."""

    def screen_changed(self, agent: Agent) -> None:
        """A new capture of a visible agent's screen is in `agent.screen`."""

    def message_changed(self, message: Message) -> None:
        """A message was queued or its delivery status changed."""

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        """A host's link went down (detail says why) or came back."""

    def notice(self, text: str) -> None:
        """Something the human should read (a background job failed, ...)."""

    def layout_changed(self) -> None:
        """Agents were added, removed or reordered (live reload)."""

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        """An edit of the layout file was not applied (`partly`: applied in part), one
        problem per line as the loader wrote them; the last good layout stays in force."""


class NullListener:
    def agent_changed(self, agent: Agent) -> None:
        pass

    def screen_changed(self, agent: Agent) -> None:
        pass

    def message_changed(self, message: Message) -> None:
        pass

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def layout_changed(self) -> None:
        pass

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        pass


class Tee:
    """Several listeners as one (the headless log and the watchers, say)."""

    def __init__(self, *listeners: FleetListener):
        self.listeners = listeners

    def agent_changed(self, agent: Agent) -> None:
        for listener in self.listeners:
            listener.agent_changed(agent)

    def screen_changed(self, agent: Agent) -> None:
        for listener in self.listeners:
            listener.screen_changed(agent)

    def message_changed(self, message: Message) -> None:
        for listener in self.listeners:
            listener.message_changed(message)

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        for listener in self.listeners:
            listener.host_changed(host, connected, detail)

    def notice(self, text: str) -> None:
        for listener in self.listeners:
            listener.notice(text)

    def layout_changed(self) -> None:
        for listener in self.listeners:
            listener.layout_changed()

    def layout_invalid(self, problems: list[str], partly: bool = False) -> None:
        for listener in self.listeners:
            listener.layout_invalid(problems, partly)
