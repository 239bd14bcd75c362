"""Benchmark: what a watcher (a view) receives from the engine over the socket.

N agents each print a timestamped line 5 times a second; one watcher attaches with 25 of them
visible and counts, for T seconds, the bytes and screen events it gets, and how fresh each
screen is when it arrives (line printed -> the screen holding it reaches the watcher). A
second watcher that shows nothing runs beside it, for what a view pays for agents it does
not show (only their state changes). Run:
    .venv/bin/python tests/bench/bench_watch.py [--agents 64] [--visible 25] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_refresh import STAMP, layout  # noqa: E402

from swarm_tui.config.layout import load_layout  # noqa: E402
from swarm_tui.fleet.engine import Fleet  # noqa: E402
from swarm_tui.fleet.server import FleetServer  # noqa: E402
from swarm_tui.fleet.store import Store  # noqa: E402
from swarm_tui.protocol.models import VERSION  # noqa: E402


async def watch(sock: Path, visible: list[str], seconds: float) -> tuple[int, int, list[float]]:
    reader, writer = await asyncio.open_unix_connection(str(sock), limit=64 * 1024 * 1024)
    writer.write(
        json.dumps({"op": "watch", "version": VERSION, "visible": visible}).encode() + b"\n"
    )
    await writer.drain()
    await reader.readline()  # the snapshot
    total, screens, ages = 0, 0, []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = await asyncio.wait_for(reader.readline(), left)
        except TimeoutError:
            break
        now = time.time()
        total += len(line)
        event = json.loads(line)
        if event.get("event") == "screen":
            screens += 1
            stamps = [float(m[1]) for ln in event["lines"] if (m := STAMP.search(ln))]
            if stamps:
                ages.append((now - max(stamps)) * 1000)
    writer.close()
    return total, screens, ages


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--agents", type=int, default=64)
    p.add_argument("--visible", type=int, default=25)
    p.add_argument("--seconds", type=float, default=10.0)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="swb") as tmp:
        os.environ["SWARM_HOME"] = tmp
        store = Store(Path(tmp) / "b.sqlite3")
        fleet = Fleet(load_layout(layout(Path(tmp), a.agents)), store)
        server = FleetServer(fleet, Path(tmp) / "b.sock")
        await server.start()
        await fleet.start()
        fleet.listener = server.watchers
        try:
            shown = list(fleet.agents)[: a.visible]
            (full, screens, ages), (empty, _, _) = await asyncio.gather(
                watch(server.path, shown, a.seconds), watch(server.path, [], a.seconds)
            )
        finally:
            await server.stop()
            await fleet.down()
            store.close()
    rate, idle_rate = full / a.seconds, empty / a.seconds
    ages.sort()
    print(f"{a.agents} agents printing 5 lines/s; a watcher showing {a.visible}, {a.seconds:.0f} s")
    print(
        f"watcher with {a.visible} tiles: {rate / 1024:.1f} KiB/s "
        f"({rate / a.visible / 1024:.2f} KiB/s per tile), {screens / a.seconds:.0f} screens/s, "
        f"screen age p50 {statistics.median(ages):.0f} ms p95 "
        f"{ages[int(len(ages) * 0.95)]:.0f} ms"
    )
    print(f"watcher showing nothing: {idle_rate / 1024:.2f} KiB/s (state changes only)")


if __name__ == "__main__":
    asyncio.run(main())
