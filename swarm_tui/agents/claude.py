"""claude: adapter (first cut: launch only; screen reading to come)."""

from __future__ import annotations

import shlex

from swarm_tui.agents.base import Adapter
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.hosts.base import LaunchContext


class ClaudeAdapter(Adapter):
    name = "claude"
    family = "anthropic"
    reads_screen = False
    idle_quiet = 2.0

    def launch(self, agent: ResolvedAgent, ctx: LaunchContext) -> str:
        model = ["--model", agent.model] if agent.model else []
        return shlex.join(["claude", *model, *agent.args])
