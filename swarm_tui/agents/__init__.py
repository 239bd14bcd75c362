"""Agent CLI adapters (launch, read the screen, submit) and the mock agent."""

from swarm_tui.agents.base import Adapter, AgentState, Reading
from swarm_tui.agents.registry import adapter_for

__all__ = ["Adapter", "AgentState", "Reading", "adapter_for"]
