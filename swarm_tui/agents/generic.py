"""Any command: state from output and quiet time alone, since its screen has no known form."""

from __future__ import annotations

from swarm_tui.agents.base import Adapter, Reading
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext


class GenericAdapter(Adapter):
    name = "generic"
    submit_delay = 0.1
    idle_quiet = 2.0
    reads_screen = False
    min_window = (20, 6)  # nothing is read from its screen

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        return agent.command

    def read(self, lines: list[str]) -> Reading:
        return Reading(None)
