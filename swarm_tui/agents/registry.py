"""Adapter lookup by the layout's `cli` name."""

from __future__ import annotations

from swarm_tui.agents.base import Adapter
from swarm_tui.agents.generic import GenericAdapter
from swarm_tui.agents.mock_adapter import MockAdapter

ADAPTERS: dict[str, type[Adapter]] = {"mock": MockAdapter, "generic": GenericAdapter}


def adapter_for(cli: str) -> Adapter:
    return ADAPTERS[cli]()
