"""A node held for a time (a Slurm job): before its end, each of its agents is asked once
for a handoff note, in its host's private state directory; the other nodes' agents are not."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from swarm_tui.fleet.lease import watch_leases
from swarm_tui.fleet.link import HostLink
from swarm_tui.fleet.store import Store
from swarm_tui.testing import async_holds, async_wait_until
from swarm_tui.testing.notices import Notices


class Fleet:
    def __init__(self, links: list[HostLink], agents: dict[str, str], store: Store) -> None:
        self.store = store
        self.links = {link.name: link for link in links}
        self.agents = {
            name: SimpleNamespace(name=name, host=host, focus=f"{name}'s focus")
            for name, host in agents.items()
        }
        self.listener = Notices()
        self.sent: list[tuple[str, str]] = []

    def link_of(self, agent: Any) -> HostLink:
        return self.links[agent.host]

    def send(self, names: list[str], text: str, sender: str = "human", task: int = 0) -> list:
        self.sent += [(n, text) for n in names]
        return []


def node(name: str, handoff_at: float, ends: float) -> HostLink:
    ctx = SimpleNamespace(state_dir=f"/state/{name}")
    host = SimpleNamespace(launch_context=lambda: ctx)
    return HostLink(
        name,
        host,
        lease="Slurm job 77",
        lease_ends=ends,  # type: ignore[arg-type]
        handoff_at=handoff_at,
    )


async def test_each_agent_of_an_ending_node_is_asked_once(tmp_path: Path) -> None:
    now = time.time()
    due, later = node("gpu01", now - 1, now + 900), node("gpu02", now + 3600, now + 4500)
    store = Store(tmp_path / "j.sqlite3")
    fleet = Fleet([due, later], {"Gauss": "gpu01", "Noether": "gpu01", "Euler": "gpu02"}, store)
    watcher = asyncio.create_task(watch_leases(fleet, [due, later], None, check=0.01))  # type: ignore[arg-type]
    try:
        await async_wait_until(lambda: len(fleet.sent) >= 2, 5, "both agents asked")
        rounds = len(fleet.listener.lines)
        await async_holds(lambda: len(fleet.sent) == 2, 0.1, "nobody asked twice")
        assert len(fleet.listener.lines) == rounds
    finally:
        watcher.cancel()
    # the engine restarted: the journal says they were asked
    again = Fleet([due, later], {"Gauss": "gpu01", "Noether": "gpu01"}, store)
    watcher = asyncio.create_task(watch_leases(again, [due, later], None, check=0.01))  # type: ignore[arg-type]
    try:
        await async_holds(lambda: again.sent == [], 0.1, "nobody asked again after a restart")
    finally:
        watcher.cancel()
    assert sorted(n for n, _ in fleet.sent) == ["Gauss", "Noether"]
    gauss = dict(fleet.sent)["Gauss"]
    assert gauss.startswith("Slurm job 77 ends in 15m; the work goes on in the next")
    assert "restarted" not in gauss and gauss.endswith("then go on with your work.")
    assert "/state/gpu01/handoff-Gauss.md" in gauss
    assert fleet.listener.lines == [
        "gpu01: Slurm job 77 ends in 15m: 2 agents asked for a handoff note"
    ]


async def test_a_supervised_loop_that_returns_is_restarted_without_a_spin() -> None:
    """The engine's supervisor starts a loop that ended again, after a pause: a loop that
    returns at once (as the lease watch did once its job ended) must not starve the rest."""
    from swarm_tui.fleet.engine import Fleet

    calls: list[float] = []

    async def returns_at_once() -> None:
        calls.append(time.monotonic())

    owner = SimpleNamespace(listener=Notices())
    task = asyncio.create_task(Fleet._supervised(owner, returns_at_once, "lease watch"))  # type: ignore[arg-type]
    try:
        await async_holds(lambda: len(calls) <= 1, 0.5, "no restart in a spin")
    finally:
        task.cancel()
    assert owner.listener.lines == ["lease watch ended by itself; restarted"]
