"""What the engine's subsystems need of it, and no more: the task board, the reminders, fresh
starts, saves, live reload, the watchers and the links to the hosts take these narrow
interfaces (the engine satisfies them), so none of them imports the engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from swarm_tui.config.layout import LoadedLayout
from swarm_tui.config.notify import Kind
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.events import FleetListener
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.store import Message, Store, Task
from swarm_tui.hosts.base import Host


class Roster(Protocol):
    """The fleet's agents and how to message them."""

    store: Store
    listener: FleetListener
    agents: dict[str, Agent]

    @property
    def loaded(self) -> LoadedLayout: ...

    def resolve(
        self,
        names: list[str],
        all_agents: bool = False,
        role: str | None = None,
        exclude: str | None = None,
    ) -> list[Agent]: ...

    def send(
        self, names: list[str], text: str, sender: str = ..., task: int = 0
    ) -> list[Message]: ...


class Alerting(Protocol):
    def alert(self, kind: Kind, subject: str, text: str) -> None: ...


class TaskHost(Roster, Protocol):
    """What the task board uses: the roster, screens, hosts and the alerts."""

    notifier: Alerting

    async def capture(self, agent: Agent) -> list[str]: ...

    def link_of(self, agent: Agent) -> HostLink: ...

    async def change_for_judge(self, agent: Agent) -> str:
        """The agent's change in its worktree as a review prompt carries it."""


class CurrentTask(Protocol):
    def current(self, agent: str) -> Task | None: ...


class ReminderHost(Roster, Protocol):
    """What the reminders use: the roster, each agent's current task, fresh starts."""

    @property
    def tasks(self) -> CurrentTask: ...

    def fresh(self, name: str, handoff: bool = True) -> Agent: ...


class FreshHost(Roster, Protocol):
    """What a fresh start uses: the roster, the agent's host, a restart of its window."""

    def link_of(self, agent: Agent) -> HostLink: ...

    async def restart(self, agent: Agent) -> None: ...


class Saved(Protocol):
    """What `swarm save` reads: the layout it came from, the agents as they are, the journal."""

    name: str
    store: Store
    agents: dict[str, Agent]

    @property
    def loaded(self) -> LoadedLayout: ...


class Countdowns(Protocol):
    def countdowns(self, agents: list[Agent]) -> dict[str, float]: ...


class JudgeLog(Protocol):
    judge_log: list[str]


class Watched(Saved, Protocol):
    """What the watchers show: agents, hosts, work and recent messages; what they set: the
    agents shown on some screen."""

    links: dict[str, HostLink]

    @property
    def reminders(self) -> Countdowns: ...

    @property
    def tasks(self) -> JudgeLog: ...

    def set_visible(self, names: set[str]) -> None: ...

    def set_sizes(self, sizes: dict[str, tuple[int, int]]) -> None: ...


class Reloadable(Protocol):
    """What a live reload changes: the agents (added, removed, restarted, re-ordered), their
    focus and prompts, the layout's reminders, and the layout itself."""

    name: str
    store: Store
    listener: FleetListener
    agents: dict[str, Agent]
    links: dict[str, HostLink]
    loaded: LoadedLayout

    @property
    def reminders(self) -> Clocked: ...

    def send(
        self, names: list[str], text: str, sender: str = ..., task: int = 0
    ) -> list[Message]: ...

    def set_focus(self, name: str, label: str, by: str = ...) -> Agent: ...

    async def create_window(self, link: HostLink, agent: Agent) -> bool: ...

    def add_agent(self, agent: Agent) -> None: ...

    def remove_agent(self, agent: Agent) -> None: ...

    async def restart(self, agent: Agent) -> None: ...


class Clocked(Protocol):
    clock: Callable[[], float]


class LinkOwner(Protocol):
    """What the links to the hosts (fleet/links.py) use: the agents, which of them this
    start created, the layout (the local windows' directory) and each window's environment;
    and where a link's change of state, or the loss of the fleet's tmux server, is said."""

    agents: dict[str, Agent]
    created: list[str]

    @property
    def loaded(self) -> LoadedLayout: ...

    def agent_env(self, agent: Agent, host: Host) -> dict[str, str]: ...

    def link_state(self, link: HostLink, up: bool, detail: str) -> None: ...

    def tmux_lost(self) -> None: ...

    def windows_lost(self, link: HostLink, agents: list[Agent]) -> None:
        """The host came back without these agents' windows (its tmux server was gone):
        new ones were made; tell each agent what it needs (fleet/comeback.py)."""

    async def prepare_worktrees(
        self, link: HostLink, create: bool, only: Agent | None = None, checked: bool = False
    ) -> None:
        """Check (or make) the worktrees of the host's agents (or of `only`); raises
        ConfigError, one line per problem."""
