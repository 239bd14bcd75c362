"""Benchmark: what the user sees — agents' lines reaching a real terminal — and what it costs.

N agents (printers) each print `A017 T <unix time>` 5 times a second in one private tmux
server. The "terminal" is a second tmux server with one W x H pane (window-size manual, no
client); each viewer runs in that pane, one after another, and the bench samples the pane
from outside every 25 ms (`capture-pane -p` down one control-mode client; its cost is not
counted). Every (agent, stamp) seen for the first time gives latency = sample time - stamp
(counted once a second sample shows it too: a row caught half rewritten is no line).

Viewers, in this order, on the same agents (swarm's own tmux server throughout; swarm runs
first so its engine starts once, and it runs only while swarm is measured):
  swarm    the engine (`swarm up LAYOUT --headless`, its own process) + `swarm ui FLEET`;
           the figure counts the view's process tree and the engine's (with its tmux
           control client); then the engine is stopped (SIGTERM, agents keep running).
           swarm chooses its tiles from the terminal's size: at 200x55, 4 x 5 = 20 (a
           38-cell sidebar, tiles >= 36 cells wide); 25 from ~218 columns (--size 220x55);
  none     no viewer: the agents' tmux server's own CPU, the baseline for "extra";
  polling  `bench_screen.py --poller`: every 500 ms one `tmux capture-pane -p` subprocess
           per agent pane (all N), then a full redraw of the visible agents' last lines in
           a grid (what other agent multiplexers do);
  tmux     tmux's own client: the visible agents' panes are joined (join-pane) into one
           window laid out `tiled`, and a plain `tmux attach` runs in the viewer pane.
Extra CPU (cores) = the viewer's process tree (+ the engine's, for swarm) + the agents' tmux
server's CPU above the `none` run. "term" is the terminal's own CPU (not counted). Run:
    .venv/bin/python tests/bench/bench_screen.py [--agents 128] [--visible 25]
        [--seconds 15] [--size 200x55] [--idle | --burst]
--idle: agents print one line and then nothing; --burst: one visible agent prints 10,000
lines at once mid-run, and the max delay of the other tiles' lines in the 2 s after it is
reported. Exits 0 (a benchmark, not a test), 1 when something did not start.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screen_probe import (  # noqa: E402
    STAMP,
    Failed,
    Terminal,
    cpu_snapshot,
    kill_server,
    proc_table,
    rss_mb,
    tmux,
    tree,
)

PRINTER = """import os, sys, time
name, mode, trigger = sys.argv[1:4]
print(f"{name} T {time.time():.6f}", flush=True)
while mode == "idle":
    time.sleep(3600)
while True:
    time.sleep(0.2)
    if trigger != "-" and os.path.exists(trigger):
        os.unlink(trigger)
        sys.stdout.write("".join(f"burst {i:05d} {'x' * 50}\\n" for i in range(10000)))
    print(f"{name} T {time.time():.6f}", flush=True)
"""
FLEET, SAMPLE, WARMUP, START_WAIT = "bench", 0.025, 3.0, 120.0


# ---------------------------------------------------------------------------- a phase
@dataclass
class Result:
    name: str
    shown: int = 0
    cores: dict[str, float] = field(default_factory=dict)  # viewer, engine, server, term
    lat: list[float] = field(default_factory=list)  # ms
    seen_rate: float = 0.0  # new stamps a second per shown agent
    rss: float = 0.0
    slow: list[float] = field(default_factory=list)  # seconds into the window, latency > 300
    worst: str = ""
    burst_max: float | None = None
    burst_shown: float | None = None  # seconds from the burst to its lines on screen
    # t, agent, ms, stamp
    points: list[tuple[float, str, float, str]] = field(default_factory=list)


def measure(
    term: Terminal,
    name: str,
    trees: dict[str, int],
    server: int,
    seconds: float,
    trigger: Path | None,
) -> Result:
    """Sample the terminal for WARMUP + `seconds`; CPU, latency and the rest over `seconds`."""
    res, seen, names, procs = Result(name), set(), set(), {"server": server, "term": term.pid}
    # a line counts once a second sample shows it too, from its first sighting: a sample can
    # catch a row half rewritten (the terminal between two reads of the viewer's output),
    # whose text is a stamp no printer printed and that is gone at the next sample
    first: dict[tuple[str, str], float] = {}
    t_end = time.time() + WARMUP + seconds
    c0, t0, burst_at, burst_t, worst = None, 0.0, 0.0, 0.0, 0.0
    while (now := time.time()) < t_end:
        if c0 is None and now >= t_end - seconds:
            c0, t0 = cpu_snapshot(trees, procs), now
            burst_at = t0 + seconds / 2 if trigger else 0.0
        if burst_at and now >= burst_at and trigger:
            trigger.write_text("go")  # the printer of A000 prints its burst and removes it
            burst_at, burst_t = 0.0, now
        text = term.capture()
        got = time.time()
        if burst_t and res.burst_shown is None and "burst 0" in text:
            res.burst_shown = got - burst_t
        for m in STAMP.finditer(text):
            key = (m[1], m[2])
            if key in seen:
                continue
            if key not in first:
                first[key] = got
                continue
            seen.add(key)
            names.add(m[1])
            at = first.pop(key)
            if c0 is not None and at >= t0:
                ms = (at - float(m[2])) * 1000
                res.lat.append(ms)
                res.points.append((at - t0, m[1], ms, m[2]))
                if ms > 300 and (not res.slow or at - t0 - res.slow[-1] > 0.5):
                    res.slow.append(at - t0)
                if ms > worst:
                    worst, res.worst = ms, f"{m[1]} at +{at - t0:.1f} s"
                if burst_t and m[1] != "A000" and 0 <= float(m[2]) - burst_t <= 2:
                    res.burst_max = max(res.burst_max or 0.0, ms)
        time.sleep(max(0.0, SAMPLE - (time.time() - now)))
    if c0 is None:
        raise Failed(f"{name}: the run ended before it was measured")
    c1, took = cpu_snapshot(trees, procs), time.time() - t0
    res.cores = {k: (c1[k] - c0[k]) / took for k in c0}
    res.rss = rss_mb(set().union(*(tree(proc_table(), p) for p in trees.values())))
    res.shown = len(names)
    res.seen_rate = len(res.lat) / took / max(1, res.shown)
    return res


# ---------------------------------------------------------------------------- viewers
def poller(sock: str, visible: int, panes: list[str]) -> None:
    """The polling viewer: a capture-pane subprocess per pane every 500 ms, full redraw."""
    while True:
        tick = time.monotonic()
        argv = ["tmux", "-L", sock, "capture-pane", "-p", "-t"]
        screens = [subprocess.run([*argv, p], capture_output=True, text=True).stdout for p in panes]
        width, height = os.get_terminal_size()
        cols = max(1, min(5, width // 30))
        rows = max(1, -(-visible // cols))
        cw, ch = width // cols, height // rows
        out = ["\x1b[H\x1b[2J"]
        for i, screen in enumerate(screens[:visible]):
            x, y = (i % cols) * cw + 1, (i // cols) * ch + 1
            lines = [ln for ln in screen.splitlines() if ln.strip()][-(ch - 1) :]
            for j, line in enumerate([f"[{i:03d} {panes[i]}]", *lines]):
                out.append(f"\x1b[{y + j};{x}H{line[: cw - 1]}")
        os.write(1, "".join(out).encode())
        time.sleep(max(0.0, 0.5 - (time.monotonic() - tick)))


def layout(tmp: Path, n: int, idle: bool) -> Path:
    printer = tmp / "printer.py"
    printer.write_text(PRINTER)
    body = [f'name = "{FLEET}"\n[defaults]\ncli = "generic"\n']
    for i in range(n):
        trigger = tmp / "burst" if i == 0 else "-"
        mode = "idle" if idle else "print"
        cmd = shlex.join([sys.executable, str(printer), f"A{i:03d}", mode, str(trigger)])
        body.append(f"[[agents]]\nname = \"A{i:03d}\"\ncommand = '{cmd}'\n")
    path = tmp / f"{FLEET}.toml"
    path.write_text("\n".join(body))
    return path


def start_engine(tmp: Path, path: Path, cleanup: list) -> subprocess.Popen[bytes]:
    from swarm_tui import daemon, paths

    with open(tmp / "engine.log", "wb") as log:
        argv = [sys.executable, "-m", "swarm_tui.cli", "up", str(path), "--headless"]
        engine = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=tmp,
        )
    cleanup.append(lambda: stop_engine(engine))
    deadline = time.monotonic() + START_WAIT
    while not ((r := daemon.ping(paths.socket_path(FLEET), 1.0)) and r.get("ready")):
        if engine.poll() is not None or time.monotonic() > deadline:
            tail = (tmp / "engine.log").read_text(errors="replace").strip().splitlines()[-1:]
            raise Failed(
                f"the swarm engine did not come up within {START_WAIT:.0f} s "
                f"(exit {engine.poll()}): {' '.join(tail)}"
            )
        time.sleep(0.2)
    return engine


def stop_engine(engine: subprocess.Popen[bytes]) -> None:
    if engine.poll() is None:
        engine.send_signal(signal.SIGTERM)  # like `swarm stop`: agents keep running
        try:
            engine.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(engine.pid, signal.SIGKILL)
            engine.wait(5)


def tile_panes(sock: str, panes: list[str], width: int, height: int) -> None:
    """tmux's own view of the visible agents: their panes joined into one tiled window."""
    first = panes[0]
    tmux(sock, "set", "-g", "window-size", "manual")
    tmux(sock, "resize-window", "-t", first, "-x", str(width), "-y", str(height - 1))
    for p in panes[1:]:
        tmux(sock, "join-pane", "-d", "-s", p, "-t", first)
        tmux(sock, "select-layout", "-t", first, "tiled")
    tmux(sock, "select-window", "-t", first)


# ---------------------------------------------------------------------------- report
def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * q))]


def report(rs: dict[str, Result], a: argparse.Namespace) -> None:
    base = rs["none"].cores["server"]
    print(
        f"\n{a.agents} agents, {'idle' if a.idle else '5 lines/s each'}"
        f"{', a 10,000-line burst mid-run' if a.burst else ''}; terminal {a.size}; "
        f"{a.seconds:.0f} s measured per viewer (after {WARMUP:.0f} s warm-up)"
    )
    print(f"agents' tmux server with no viewer: {base:.3f} cores")
    print(
        f"{'viewer':8} {'tiles':>5} | {'extra CPU (cores)':>17} {'= own + engine + srv':>22}"
        f" | {'latency p50/p95/max ms':>22} {'new/s/tile':>10} | {'RSS MB':>6} | term"
    )
    extra: dict[str, float] = {}
    viewers = [n for n in ("polling", "tmux", "swarm") if n in rs]
    for name in viewers:
        r, c = rs[name], rs[name].cores
        srv = c["server"] - base
        extra[name] = c.get("viewer", 0) + c.get("engine", 0) + srv
        lat = "-"
        if r.lat and not a.idle:
            lat = f"{pct(r.lat, 0.5):.0f}/{pct(r.lat, 0.95):.0f}/{max(r.lat):.0f}"
        parts = f"{c.get('viewer', 0):.3f} + {c.get('engine', 0):.3f} + {srv:.3f}"
        print(
            f"{name:8} {r.shown or '-':>5} | {extra[name]:17.3f} {parts:>22} | {lat:>22} "
            f"{r.seen_rate if r.lat else 0:10.1f} | {r.rss:6.0f} | {c['term']:.3f}"
        )
    for name in viewers:
        if (r := rs[name]).lat and not a.idle:
            print(
                f"  {name}: max {max(r.lat):.0f} ms ({r.worst}); latency > 300 ms at "
                f"{', '.join(f'+{s:.1f}' for s in r.slow[:15]) or 'never'}"
            )
    if a.burst:
        for name in viewers:
            shown = "-" if (b := rs[name].burst_max) is None else f"{b:.0f} ms"
            goal = " (goal <= 100)" if name == "swarm" else ""
            print(
                f"{name}: max delay of the other tiles, 2 s after the burst = {shown}{goal}"
                f"; the burst on screen after {rs[name].burst_shown or 0:.1f} s"
            )

    if "swarm" not in rs:
        return
    sw = rs["swarm"]
    if "polling" not in rs:  # --only swarm: its own figures, no ratios
        print(f"swarm shows {sw.shown} tiles; engine + UI RSS = {sw.rss:.0f} MB")
        return
    po = rs["polling"]
    print(f"swarm shows {sw.shown} tiles at {a.size} (polling and tmux show {po.shown})")
    if a.idle:
        print(
            f"swarm engine + UI CPU = {extra['swarm'] - (sw.cores['server'] - base):.4f} "
            f"cores (goal <= 0.01)"
        )
    else:
        goal = "< 1" if a.agents <= a.visible else "<= 0.20"
        print(
            f"swarm CPU / polling CPU = {extra['swarm'] / max(extra['polling'], 1e-9):.2f} "
            f"(goal {goal})"
        )
        if extra.get("tmux", 0) > 0.005:  # else within the noise of the baseline
            print(f"swarm CPU / tmux CPU = {extra['swarm'] / extra['tmux']:.1f}")
    print(f"swarm engine + UI RSS = {sw.rss:.0f} MB (goal <= 300)")
    if sw.lat and not a.idle:
        print(
            f"swarm latency p50 = {pct(sw.lat, 0.5):.0f} ms (goal <= 30), p95 = "
            f"{pct(sw.lat, 0.95):.0f} ms (goal <= 100), max = {max(sw.lat):.0f} ms "
            "(goal <= 300)"
        )


# ---------------------------------------------------------------------------- main
def run(a: argparse.Namespace, tmp: Path, cleanup: list) -> dict[str, Result]:
    from swarm_tui import paths

    width, height = (int(x) for x in a.size.split("x"))
    home = tmp / "home"
    os.environ.update(SWARM_HOME=str(home), TMUX_TMPDIR=str(tmp), COLORTERM="truecolor")
    os.environ.pop("TMUX", None)
    asock, vsock = paths.tmux_socket_name(FLEET), "bsv"
    cleanup += [lambda: kill_server(asock), lambda: kill_server(vsock)]
    engine = start_engine(tmp, layout(tmp, a.agents, a.idle), cleanup)
    server = int(tmux(asock, "display", "-p", "#{pid}"))
    rows = tmux(asock, "list-panes", "-s", "-t", f"={FLEET}", "-F", "#{window_name} #{pane_id}")
    panes = [p for n, p in sorted(ln.split() for ln in rows.splitlines()) if n != "_swarm"]
    if len(panes) != a.agents:
        raise Failed(f"the engine started {len(panes)} agent panes, not {a.agents}")
    term = Terminal(vsock, width, height)
    cleanup.append(term.ctl.kill)
    time.sleep(3.0)  # the printers' start-up settles
    py, me = shlex.quote(sys.executable), shlex.quote(str(Path(__file__).resolve()))
    env = f"exec env -u TMUX SWARM_HOME={shlex.quote(str(home))} "
    phases = {
        "swarm": f"{env}{py} -m swarm_tui.cli ui {FLEET}",
        "none": "",
        "polling": f"{env}{py} {me} --poller {asock} {a.visible} {' '.join(panes)}",
        "tmux": f"{env}tmux -L {asock} attach -t ={FLEET}",
    }
    results = {}
    for name, command in phases.items():
        if a.only and name not in (a.only, "none"):
            continue
        if name == "tmux":
            tile_panes(asock, panes[: a.visible], width, height)
        trees = {"viewer": term.run(command)} if command else {}
        if name == "swarm":
            trees["engine"] = engine.pid
        if command:
            term.wait_for_stamp(name)
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        trigger = tmp / "burst" if a.burst else None
        spies = profile(a.profile, trees, a.seconds) if a.profile and name == "swarm" else []
        results[name] = measure(term, name, trees, server, a.seconds, trigger)
        for spy in spies:
            spy.wait(30)
        term.run("sleep 86400")
        if name == "swarm":
            stop_engine(engine)
        time.sleep(1.0)
    return results


def profile(out: str, trees: dict[str, int], seconds: float) -> list[subprocess.Popen[bytes]]:
    """py-spy (from PyPI) records the engine and the view while they are measured: folded
    stacks in OUT/engine.txt and OUT/viewer.txt, summed up by `bench/profile_summary.py`."""
    Path(out).mkdir(parents=True, exist_ok=True)
    spy = Path(sys.executable).with_name("py-spy")
    pids = {k: max(tree(proc_table(), p)) if k == "viewer" else p for k, p in trees.items()}
    return [
        subprocess.Popen(
            [
                str(spy),
                "record",
                "--gil",
                "--format",
                "raw",
                "-r",
                "100",
                "-d",
                str(int(seconds)),
                "-o",
                f"{out}/{k}.txt",
                "-p",
                str(pid),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for k, pid in pids.items()
    ]


def interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM, SIGHUP: clean up as for Ctrl-C


def main() -> int:
    if sys.argv[1:2] == ["--poller"]:
        poller(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=128)
    p.add_argument("--visible", type=int, default=25)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--size", default="200x55", help="the terminal, COLSxROWS")
    p.add_argument("--profile", metavar="DIR", help="py-spy the engine and the view (swarm)")
    p.add_argument("--only", choices=("swarm", "polling", "tmux"), help="one viewer (+ none)")
    p.add_argument("--trace", help="write every latency seen (viewer,t,agent,ms,stamp) to this CSV")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--idle", action="store_true", help="agents that print nothing")
    mode.add_argument("--burst", action="store_true", help="one agent prints 10,000 lines")
    a = p.parse_args()
    a.visible = min(a.visible, a.agents)
    cleanup: list = []
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    with tempfile.TemporaryDirectory(prefix="sws") as tmp:
        try:
            results = run(a, Path(tmp), cleanup)
        except Failed as exc:
            print(f"bench_screen: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("bench_screen: interrupted", file=sys.stderr)
            return 130
        finally:
            for undo in reversed(cleanup):
                try:
                    undo()
                except Exception as exc:  # clean up the rest regardless
                    print(f"bench_screen: cleanup: {exc}", file=sys.stderr)
    report(results, a)
    if a.trace:
        with open(a.trace, "w") as f:
            f.writelines(
                f"{v},{t:.3f},{n},{ms:.1f},{stamp}\n"
                for v, r in results.items()
                for t, n, ms, stamp in r.points
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
