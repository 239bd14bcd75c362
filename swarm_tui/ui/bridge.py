"""Engine callbacks into the UI: remember what changed; the app's timer draws it in batches."""

from __future__ import annotations

from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import Message


class UiBridge:
    """A FleetListener that only records; nothing here touches a widget."""

    def __init__(self) -> None:
        self.screens: set[str] = set()
        self.agents: set[str] = set()
        self.messages: list[Message] = []
        self.hosts: set[str] = set()
        self.notices: list[str] = []
        self.relayout = False

    def agent_changed(self, agent: Agent) -> None:
        self.agents.add(agent.name)

    def screen_changed(self, agent: Agent) -> None:
        self.screens.add(agent.name)

    def message_changed(self, message: Message) -> None:
        self.messages.append(message)

    def host_changed(self, host: str, connected: bool, detail: str) -> None:
        self.hosts.add(host)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def layout_changed(self) -> None:
        self.relayout = True
