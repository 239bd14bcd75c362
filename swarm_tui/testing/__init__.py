"""Reusable test support: a private tmux world per test, mock-agent layouts, polling waits.

Load the fixtures with `pytest_plugins = ["swarm_tui.testing.fixtures"]`.
"""

from swarm_tui.testing.sandbox import (
    FAST_MOCK_ARGS,
    Headless,
    Sandbox,
    TmuxServer,
    mock_agent,
    shell_agent,
    swarm_argv,
)
from swarm_tui.testing.waiting import async_holds, async_wait_until, holds, wait_until

__all__ = [
    "FAST_MOCK_ARGS",
    "Headless",
    "Sandbox",
    "TmuxServer",
    "async_holds",
    "async_wait_until",
    "holds",
    "mock_agent",
    "shell_agent",
    "swarm_argv",
    "wait_until",
]
