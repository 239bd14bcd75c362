"""The target fleet: 16 real-sshd nodes x 8 mock agents = 128 agents under one engine.

All come up and go idle; tiles on several nodes stay live (a watcher on the engine's socket,
as the UI, sees their screens change); an agent on one node messages agents on others with
the node's own `swarm send`; three links cut at once and restored lose, double and reorder
nothing. One test, so the fleet starts once (its start-up is most of the wall time; the
benchmark tests/bench/bench_startup.py says where it goes).

Needs root, iproute2 and openssh-server (`.ci/run` installs it). Elsewhere it skips with the
reason, except in CI (CI=true), where a skip is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.server import FleetServer
from swarm_tui.fleet.store import OPEN, Store
from swarm_tui.paths import socket_path, tmux_socket_name
from swarm_tui.protocol.client import FleetClient
from swarm_tui.testing import async_holds, async_wait_until, netns
from tests.faults.ledger import account
from tests.ssh.conftest import real_nodes
from tests.ssh.test_cluster import FAST

NODES = [f"node{i:02d}" for i in range(1, 17)]
PER_NODE = 8
CUT = ["node04", "node09", "node14"]  # cut at once, restored at once
TILES = ["node02", "node07", "node09", "node12", "node16"]  # one watched agent on each
QUEUED = 2  # messages queued for each agent of a cut node during the outage
# 129 agents on a 2-core machine that may be running the rest of the suite: ~30-40 s alone,
# minutes under load
START = 240.0

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture
def nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[netns.NetnsCluster]:
    with real_nodes(tmp_path, monkeypatch, *NODES) as cluster:
        yield cluster


def received(log: Path, agent: str) -> list[str]:
    """What the mock agent `agent` was typed, in order (its log: one JSON line a message)."""
    if not log.exists():
        return []
    rows = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [r["text"] for r in rows if r["agent"] == agent]


@pytest.fixture
async def served(
    nodes: netns.NetnsCluster, home: Path, tmp_path: Path
) -> AsyncIterator[tuple[Fleet, float]]:
    """The fleet in this process, its socket served and its watchers told (as `swarm up`),
    and the seconds `Fleet.start` took; afterwards its tmux servers (one per node, sockets on
    this shared filesystem) killed."""
    log = tmp_path / "mock.log"
    layout = tmp_path / "ssh.toml"
    layout.write_text(
        'name = "ssh"\n[defaults]\ncli = "mock"\n'
        '[hosts."node[01-16]"]\nssh = "node{}"\n'
        '[[agents]]\nname = "Relay"\nhost = "node01"\ncli = "generic"\n'
        'command = "bash --norc --noprofile"\n'
        f'[[groups]]\nhosts = ["node[01-16]"]\nper_host = {PER_NODE}\nargs = {FAST}\n'
        f'env = {{ SWARM_MOCK_LOG = "{log}" }}\n'
    )
    store = Store(home / "ssh.sqlite3")
    fleet = Fleet(load_layout(layout), store)
    server = FleetServer(fleet, socket_path(fleet.name))
    try:
        await server.start()
        began = time.monotonic()
        await fleet.start()
        fleet.listener = server.watchers
        yield fleet, time.monotonic() - began
    finally:
        for node in nodes.nodes.values():
            subprocess.run(["ip", "link", "set", node.veth, "up"], capture_output=True)
        await server.stop()
        await fleet.stop()
        store.close()
        base = tmux_socket_name("ssh")  # the nodes' servers: /tmp/tmux-UID, not TMUX_TMPDIR
        for sock in (Path("/tmp") / f"tmux-{os.getuid()}").glob(f"{base}-node*"):
            subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)


def on(fleet: Fleet, host: str) -> list[str]:
    return [a.name for a in fleet.agents.values() if a.spec.host == host and a.spec.cli == "mock"]


def not_idle(fleet: Fleet) -> str:
    """Each agent that is not idle, and why: its link, its last capture, its screen's end."""
    now = time.monotonic()
    rows = []
    for a in fleet.agents.values():
        if a.state is AgentState.IDLE:
            continue
        link = fleet.link_of(a)
        tail = [ln.strip() for ln in a.plain_screen() if ln.strip()][-2:]
        captured = f"{now - a.last_capture:.1f} s ago" if a.last_capture else "never"
        up = "up" if link.connected else f"down ({link.detail or 'connecting'})"
        rows.append(
            f"  {a.name}@{a.host}: {a.state.value}; link {up}; "
            f"pane {a.pane or '-'}; captured {captured}; screen ends {tail!r}"
        )
    down = [f"{n}: {link.detail}" for n, link in fleet.links.items() if not link.connected]
    head = f"{len(rows)} of {len(fleet.agents)} agents not idle"
    return "\n".join(
        [
            head + (f"; links down: {'; '.join(down)}" if down else ""),
            *rows[:40],
            *(["  ..."] if len(rows) > 40 else []),
        ]
    )


class Phases:
    """Seconds each phase of the test took, said at the end."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.took: list[tuple[str, float]] = []

    def done(self, phase: str) -> None:
        now = time.monotonic()
        self.took.append((phase, now - self.last))
        self.last = now

    def __str__(self) -> str:
        return "phases: " + ", ".join(f"{p} {s:.1f} s" for p, s in self.took)


def links(fleet: Fleet) -> str:
    return "; ".join(
        f"{n}: {'up' if k.connected else 'down ' + k.detail}" for n, k in fleet.links.items()
    )


async def test_128_agents_on_16_real_nodes(
    served: tuple[Fleet, float], nodes: netns.NetnsCluster, tmp_path: Path
) -> None:
    fleet, started = served
    log = tmp_path / "mock.log"
    clock = Phases()
    clock.took.append(("Fleet.start", started))
    assert [len(on(fleet, n)) for n in NODES] == [PER_NODE] * len(NODES)
    assert len(fleet.agents) == len(NODES) * PER_NODE + 1  # and the Relay shell

    # ------------------------------------------------------------ all 129 come up
    await async_wait_until(
        lambda: all(a.state is AgentState.IDLE for a in fleet.agents.values()),
        START,
        "every agent idle",
        lambda: not_idle(fleet),
    )
    assert all(link.connected for link in fleet.links.values()), links(fleet)
    clock.done("all idle")

    # ------------------------------------------------------------ tiles stay live
    tiles = [on(fleet, n)[1] for n in TILES]
    watcher = FleetClient(socket_path(fleet.name))
    view = await watcher.connect(tiles)
    try:
        for name in tiles:
            fleet.send([name], f"tile check for {name}")

        def shows(name: str, *texts: str) -> bool:
            screen = "\n".join(view.screens.get(name, []))
            return all(t in screen for t in texts)

        # the watcher sees each tile's screen change twice: the message typed, then the
        # turn it started finishing (the mock prints "Done" when its work is over)
        await async_wait_until(
            lambda: all(shows(n, f"> tile check for {n}", "● Done:") for n in tiles),
            60,
            "every tile to show its message and the finished turn",
            lambda: "\n".join(f"{n}: {view.screens.get(n, [])[-6:]!r}" for n in tiles),
        )
        assert {n: received(log, n) for n in tiles} == {n: [f"tile check for {n}"] for n in tiles}
        clock.done("tiles")

        # -------------------------------------------------------- node to node, for real
        # typed into a shell on node01: the node's own `swarm` client, through its relay
        targets = [on(fleet, "node16")[0], on(fleet, "node08")[0]]
        for target in targets:
            fleet.send(["Relay"], f'swarm send {target} "from node01 to {target}"')
        await async_wait_until(
            lambda: all(received(log, t) for t in targets),
            60,
            "node01 -> node16 and node08 messages",
            lambda: "\n".join(fleet.agents["Relay"].plain_screen()[-8:]),
        )
        assert {t: received(log, t) for t in targets} == {
            t: [f"[message from Relay] from node01 to {t}"] for t in targets
        }

        def relayed() -> list[tuple[str, str]]:
            return sorted(
                (m.recipient, m.status) for m in fleet.store.messages(10_000) if m.sender == "Relay"
            )

        await async_wait_until(
            lambda: all(s == "delivered" for _, s in relayed()),
            20,
            "the Relay's messages journaled delivered",
            lambda: repr(relayed()),
        )
        assert relayed() == sorted((t, "delivered") for t in targets)
        clock.done("swarm send across nodes")

        # -------------------------------------------------------- three links cut at once
        victims = [name for node in CUT for name in on(fleet, node)]
        before = {n: received(log, n) for n in victims}
        panes = {n: fleet.agents[n].pane for n in victims}
        for node in CUT:
            nodes.nodes[node].cut()
        # a silent cut: keepalive (3 s x 3) notices it
        await async_wait_until(
            lambda: not any(fleet.links[n].connected for n in CUT),
            45,
            "the three cut links seen down",
            lambda: links(fleet),
        )
        assert all(fleet.agents[n].state is AgentState.UNREACHABLE for n in victims)
        clock.done("cut seen")
        sent = {
            n: [f"{n} queued {i} during the outage" for i in range(1, QUEUED + 1)] for n in victims
        }
        for i in range(QUEUED):  # interleaved, as a fleet's traffic is
            for name in victims:
                fleet.send([name], sent[name][i])
        # the other nodes do not wait for the cut ones
        others = [on(fleet, n)[2] for n in NODES if n not in CUT][:4]
        for name in others:
            fleet.send([name], f"{name}: the rest of the fleet goes on")
        await async_wait_until(
            lambda: all(received(log, n) for n in others),
            30,
            "messages to agents on links that were not cut",
            lambda: not_idle(fleet),
        )
        assert all(not fleet.links[n].connected for n in CUT), links(fleet)
        assert {n: received(log, n) for n in victims} == before  # nothing typed meanwhile

        clock.done("others served")
        for node in CUT:
            nodes.nodes[node].restore()
        await async_wait_until(
            lambda: all(fleet.links[n].connected for n in CUT),
            60,
            "the three links back",
            lambda: links(fleet),
        )
        ids = {
            m.id
            for m in fleet.store.messages(10_000)
            if m.recipient in victims and "during the outage" in m.text
        }
        assert len(ids) == len(victims) * QUEUED
        clock.done("links back")

        def settled() -> bool:
            return not any(m.status in OPEN for m in fleet.store.messages(10_000) if m.id in ids)

        await async_wait_until(settled, 90, "every queued message settled", lambda: not_idle(fleet))
        got = {n: received(log, n)[len(before[n]) :] for n in victims}
        await async_holds(
            lambda: {n: received(log, n)[len(before[n]) :] for n in victims} == got,
            1.0,
            "nothing typed after every message settled",
        )
        run = account(sent, got)
        assert not run.problems, "\n".join(run.problems)
        assert (run.sent, run.delivered, run.lost, run.duplicated, run.reordered) == (
            len(victims) * QUEUED,
            len(victims) * QUEUED,
            0,
            0,
            0,
        )
        assert {m.status for m in fleet.store.messages(10_000) if m.id in ids} == {"delivered"}
        assert {n: fleet.agents[n].pane for n in victims} == panes  # re-attached, same panes
        # the watched tile on a cut node is live again: its screen shows what was queued
        cut_tile = tiles[TILES.index("node09")]
        await async_wait_until(
            lambda: shows(cut_tile, f"> {sent[cut_tile][-1]}"),
            30,
            f"{cut_tile}'s tile to show its queued messages",
            lambda: repr(view.screens.get(cut_tile, [])[-6:]),
        )
        clock.done("delivered")
        print(clock)  # where a run's wall time goes (pytest -s, or the report of a failure)
    finally:
        await watcher.close()
