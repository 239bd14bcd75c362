"""A pytest plugin: `pytest_plugins = ["swarm_tui.testing.fixtures"]`.

Fixtures
- `sandbox`: a private SWARM_HOME (and tmux socket dir) under /tmp, layouts and mock-agent
  logs in `tmp_path`, the `swarm` CLI as a subprocess; kills what it started on teardown.
- `start_fleet`: starts a `Fleet` in this test's event loop (and its Unix socket server), the
  way `swarm up` does; stops it (agents keep running until the sandbox kills tmux) on teardown.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swarm_tui.testing.sandbox import LEAKY_ENV, Sandbox
from swarm_tui.testing.waiting import async_wait_until

if TYPE_CHECKING:
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.server import FleetServer
    from swarm_tui.fleet.store import Store


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    box = Sandbox.create(tmp_path)
    for key in LEAKY_ENV:
        monkeypatch.delenv(key, raising=False)
    # in-process fleets read these from os.environ; subprocesses get box.env
    monkeypatch.setenv("SWARM_HOME", str(box.home))
    monkeypatch.setenv("TMUX_TMPDIR", str(box.home))
    try:
        yield box
    finally:
        box.cleanup()


@dataclass
class RunningFleet:
    """A fleet started in-process: the engine, its journal and its socket server."""

    fleet: Fleet
    store: Store
    server: FleetServer | None
    sandbox: Sandbox
    stopped: bool = False

    async def stop(self) -> None:
        """What `swarm up` does on Ctrl-C: close the socket, stop watching; agents keep running."""
        if self.stopped:
            return
        self.stopped = True
        if self.server is not None:
            await self.server.stop()
        await self.fleet.stop()
        self.store.close()

    def screens(self) -> str:
        """Every agent's last captured screen, for failure messages."""
        parts = []
        for agent in self.fleet.agents.values():
            parts.append(f"--- {agent.name} ({agent.state.value}, pane {agent.pane})")
            parts += [ln.rstrip() for ln in agent.plain_screen() if ln.strip()]
        return "\n".join(parts)

    async def wait_states(
        self, state: str, names: list[str] | None = None, timeout: float = 10.0
    ) -> None:
        agents = self.fleet.agents
        wanted = names or list(agents)
        await async_wait_until(
            lambda: all(agents[n].state.value == state for n in wanted),
            timeout,
            f"agents {wanted} to be {state}",
            self.screens,
        )


StartFleet = Callable[..., Awaitable[RunningFleet]]


@pytest.fixture
async def start_fleet(sandbox: Sandbox) -> AsyncIterator[StartFleet]:
    from swarm_tui import paths
    from swarm_tui.config.layout import load_layout
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.server import FleetServer
    from swarm_tui.fleet.store import Store

    running: list[RunningFleet] = []

    async def start(layout: Path, serve: bool = True, visible: bool = True) -> RunningFleet:
        """Start (or re-attach to) the fleet of `layout`; `visible` re-reads tiles fast."""
        loaded = load_layout(layout)
        store = Store(paths.db_path(loaded.fleet))
        fleet = Fleet(loaded, store)
        await fleet.start()
        server = None
        if serve:
            server = FleetServer(fleet, paths.socket_path(fleet.name))
            await server.start()
        if visible:
            fleet.set_visible(set(fleet.agents))
        run = RunningFleet(fleet, store, server, sandbox)
        running.append(run)
        return run

    yield start
    for run in reversed(running):
        await run.stop()
