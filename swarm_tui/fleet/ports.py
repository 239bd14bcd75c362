"""What the engine's subsystems need of it, and no more: the task board and the reminders
take these narrow interfaces (the engine satisfies them), so neither imports the engine."""

from __future__ import annotations

from typing import Protocol

from swarm_tui.config.layout import LoadedLayout
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.store import Message, Store, Task


class Roster(Protocol):
    """The fleet's agents and how to message them."""

    store: Store
    listener: FleetListener
    agents: dict[str, Agent]

    @property
    def loaded(self) -> LoadedLayout: ...

    def resolve(self, names: list[str], all_agents: bool = False, role: str | None = None,
                exclude: str | None = None) -> list[Agent]: ...

    def send(self, names: list[str], text: str, sender: str = ..., task: int = 0
             ) -> list[Message]: ...


class TaskHost(Roster, Protocol):
    """What the task board uses: the roster, screens and hosts."""

    async def capture(self, agent: Agent) -> list[str]: ...

    def link_of(self, agent: Agent) -> HostLink: ...


class CurrentTask(Protocol):
    def current(self, agent: str) -> Task | None: ...


class ReminderHost(Roster, Protocol):
    """What the reminders use: the roster, each agent's current task, fresh starts."""

    @property
    def tasks(self) -> CurrentTask: ...

    def fresh(self, name: str, handoff: bool = True) -> Agent: ...
