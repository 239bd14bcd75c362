"""Benchmark: how fast and how cheaply tiles follow their agents' output.

Runs N agents that each print a timestamped line 5 times a second in one private tmux
server, with 25 of them "on screen", and measures for T seconds:
  swarm     — the engine: one control-mode client, %output doorbells, captures of dirty
              visible panes down the same channel;
  baseline  — what other agent multiplexers do: a `tmux capture-pane` subprocess for every
              pane every 500 ms.
Prints CPU (cores, swarm process + tmux server + children) and the latency from a line being
printed to it being in a capture, and the ratios baseline/swarm. Run:
    .venv/bin/python tests/bench/bench_refresh.py [--agents 128] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swarm_tui.config.layout import load_layout
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.events import NullListener
from swarm_tui.fleet.store import Store

PRINTER = (
    "import time\nwhile True:\n    print('T %.6f' % time.time(), flush=True)\n    time.sleep(0.2)\n"
)
STAMP = re.compile(r"T (\d+\.\d+)")


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Latency:
    def __init__(self) -> None:
        self.samples: list[float] = []
        self.seen: dict[str, float] = {}

    def screen(self, key: str, lines: list[str]) -> None:
        now = time.time()
        for line in reversed(lines):
            m = STAMP.search(line)
            if m:
                ts = float(m.group(1))
                if ts > self.seen.get(key, 0):
                    self.seen[key] = ts
                    self.samples.append(now - ts)
                return

    def report(self) -> tuple[float, float]:
        s = sorted(self.samples)
        return statistics.mean(s) * 1000, s[int(len(s) * 0.95)] * 1000


class Recorder(NullListener):
    def __init__(self, latency: Latency) -> None:
        self.latency = latency

    def screen_changed(self, agent: Agent) -> None:
        self.latency.screen(agent.name, agent.screen)


def layout(tmp: Path, n: int) -> Path:
    printer = tmp / "printer.py"
    printer.write_text(PRINTER)
    body = ['name = "bench"\n[defaults]\ncli = "generic"\n']
    for i in range(n):
        body.append(f'[[agents]]\nname = "A{i:03d}"\ncommand = "{sys.executable} {printer}"\n')
    path = tmp / "bench.toml"
    path.write_text("\n".join(body))
    return path


async def measure_swarm(fleet: Fleet, visible: list[str], seconds: float) -> tuple[float, Latency]:
    lat = Latency()
    fleet.listener = Recorder(lat)
    fleet.set_visible(set(visible))
    server = int((await fleet.host.run("display-message", "-p", "#{pid}"))[1].strip())
    await asyncio.sleep(1.0)  # warm up: every tile captured once
    lat.samples.clear()
    c0, s0, t0 = own_cpu(), cpu_of(server), time.monotonic()
    await asyncio.sleep(seconds)
    mine, tmux = own_cpu() - c0, cpu_of(server) - s0
    print(f"  swarm: own {mine:.2f}s, tmux server {tmux:.2f}s cpu", file=sys.stderr)
    return (mine + tmux) / (time.monotonic() - t0), lat


async def measure_polling(fleet: Fleet, seconds: float) -> tuple[float, Latency]:
    fleet.set_visible(set())
    lat = Latency()
    server = int((await fleet.host.run("display-message", "-p", "#{pid}"))[1].strip())
    panes = [(a.name, a.pane) for a in fleet.agents.values()]
    argv = fleet.host.argv
    c0, s0, t0 = own_cpu(), cpu_of(server), time.monotonic()
    while time.monotonic() - t0 < seconds:
        tick = time.monotonic()
        for name, pane in panes:
            out = subprocess.run(
                argv("capture-pane", "-p", "-t", pane), capture_output=True, text=True
            ).stdout
            lat.screen(name, out.splitlines())
        await asyncio.sleep(max(0.0, 0.5 - (time.monotonic() - tick)))
    cpu = own_cpu() - c0 + cpu_of(server) - s0
    return cpu / (time.monotonic() - t0), lat


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--agents", type=int, default=64)
    p.add_argument("--visible", type=int, default=25)
    p.add_argument("--seconds", type=float, default=8.0)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="swb") as tmp:
        os.environ["SWARM_HOME"] = tmp
        store = Store(Path(tmp) / "b.sqlite3")
        fleet = Fleet(load_layout(layout(Path(tmp), a.agents)), store)
        await fleet.start()
        try:
            visible = list(fleet.agents)[: a.visible]
            base_cpu, base_lat = await measure_polling(fleet, a.seconds)
            sw_cpu, sw_lat = await measure_swarm(fleet, visible, a.seconds)
        finally:
            await fleet.down()
            store.close()
    bm, bp = base_lat.report()
    sm, sp = sw_lat.report()
    print(f"{a.agents} agents printing 5 lines/s, {a.visible} on screen, {a.seconds:.0f} s each")
    print(
        f"baseline (capture-pane subprocess per pane every 500 ms): cpu {base_cpu:.3f} cores, "
        f"latency mean {bm:.0f} ms p95 {bp:.0f} ms"
    )
    print(
        f"swarm (one control client, doorbell + capture):           cpu {sw_cpu:.3f} cores, "
        f"latency mean {sm:.0f} ms p95 {sp:.0f} ms"
    )
    print(
        f"ratios baseline/swarm: cpu {base_cpu / sw_cpu:.1f}x, latency mean {bm / sm:.1f}x, "
        f"p95 {bp / sp:.1f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
