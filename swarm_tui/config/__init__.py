"""Pydantic models of what comes from files: layouts (and later hosts, tasks, reminders)."""

from swarm_tui.config.layout import AgentSpec, Layout, load_layout, resolve_layout

__all__ = ["AgentSpec", "Layout", "load_layout", "resolve_layout"]
