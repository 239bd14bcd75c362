"""Adapter lookup by the layout's `cli` name."""

from __future__ import annotations

from swarm_tui.agents.aider import AiderAdapter
from swarm_tui.agents.base import Adapter
from swarm_tui.agents.claude import ClaudeAdapter
from swarm_tui.agents.codex import CodexAdapter
from swarm_tui.agents.copilot import CopilotAdapter
from swarm_tui.agents.cursor import CursorAdapter
from swarm_tui.agents.gemini import GeminiAdapter
from swarm_tui.agents.generic import GenericAdapter
from swarm_tui.agents.mock_adapter import MockAdapter
from swarm_tui.agents.opencode import OpencodeAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    "mock": MockAdapter,
    "generic": GenericAdapter,
    "claude": ClaudeAdapter,
    "codex": CodexAdapter,
    "cursor": CursorAdapter,
    "gemini": GeminiAdapter,
    "aider": AiderAdapter,
    "opencode": OpencodeAdapter,
    "copilot": CopilotAdapter,
}


def adapter_for(cli: str) -> Adapter:
    return ADAPTERS[cli]()
