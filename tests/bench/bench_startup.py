"""Benchmark: start-up of the target fleet (16 real-sshd nodes x 8 mock agents = 128 agents
under one engine) against a floor measured in the same run, and the engine's cost after it.

Nodes are network namespaces, each with its own address and a real OpenSSH `sshd`
(swarm_tui/testing/netns.py; needs root, iproute2 and openssh-server). Measured, in order:

  floor   the same 128 agents (the same mock command line, the same `python3`, the same
          swarm.conf) launched straight into tmux with no swarm: one tmux server per node,
          each node's windows made by one `tmux` command line, the 16 lines run at once.
          Time from before the first tmux command to the moment every pane shows its idle
          prompt (the mock adapter's own reading of a `capture-pane`, taken when the pane
          prints: one control-mode observer per server, its cost counted in the floor);
  swarm   the engine (this file in `--engine` mode: `swarm up --headless`'s own `_run_fleet`,
          with timers wrapped around engine methods inside that process only). Time from the
          layout being read to every agent idle (the engine's state, i.e. after its idle
          hold), with where the time went: SSH connections, node set-up (support files, the
          relay), worktree checks, tmux sessions, windows, first captures, first idle screens;
  rest    the engine's CPU (share of one core) and RSS, every agent idle, nobody watching;
  stream  the same while a watcher (a FleetClient on the engine's socket, as the UI) shows 25
          tiles whose agents are working (the mock redraws 4 times a second).

Rounds: the first is a first start of the fleet on these nodes; later ones start the same
fleet (the same SWARM_HOME) again after it was stopped and its tmux servers killed, as after
`swarm down` (what a node set-up left there, such as the interpreter it found, is kept).

Start-up is CPU-bound on a small machine: the machine's CPU used (all processes, from
/proc/stat) during each start-up is printed beside it, and, for swarm, by process name.
Run (as root):
    .venv/bin/python tests/bench/bench_startup.py [--nodes 16] [--per-node 8] [--rounds 1]
        [--rest 10] [--stream 8] [--tiles 25] [--no-floor] [--no-stream]
Exits 0 (a benchmark, not a test), 1 when something did not come up, 2 when it cannot run here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from screen_probe import Failed, proc_table, rss_mb, tree  # noqa: E402 - needs sys.path above

FLEET = "bench"
MOCK_ARGS = [
    "--startup",
    "0.2",
    "--permission-rate",
    "0",
    "--give-up-rate",
    "0",
    "--quiet-rate",
    "0",
]
TICK = os.sysconf("SC_CLK_TCK")


# ============================================================================ shared
def layout_text(nodes: int, per_node: int, work: float, log: Path) -> str:
    last = f"{nodes:02d}"
    args = json.dumps([*MOCK_ARGS, "--work", str(work)])
    return (
        f'name = "{FLEET}"\n[defaults]\ncli = "mock"\n'
        f'[hosts."node[01-{last}]"]\nssh = "node{{}}"\n'
        f'[[groups]]\nhosts = ["node[01-{last}]"]\nper_host = {per_node}\n'
        f'args = {args}\nenv = {{ SWARM_MOCK_LOG = "{log}" }}\n'
    )


def machine_cpu() -> float:
    """CPU seconds the whole machine has used (every core, idle and iowait left out)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICK


def tmux_servers(marker: str) -> list[int]:
    """The tmux servers whose command line names `marker` (their sockets)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                comm = Path(f"/proc/{d}/comm").read_text().strip()
                cmdline = Path(f"/proc/{d}/cmdline").read_bytes()
            except OSError:
                continue
            if comm == "tmux: server" and marker.encode() in cmdline:
                pids.append(int(d))
    return pids


def trees_cpu(pids: list[int]) -> float:
    """CPU seconds of process trees: every live process's own, and what the trees' processes
    have reaped of their dead children (a one-off command's shell, once it is waited for)."""
    return sum(trees_split(pids))


def trees_split(pids: list[int]) -> tuple[float, float]:
    """(own, reaped) CPU seconds of process trees. An agent's "reaped" CPU is what ran in
    its process before it became the agent: the shell of its launch line and what that
    shell ran first (a ~/.bashrc, a pyenv shim's helpers)."""
    t = proc_table()
    live = set().union(*(tree(t, pid) for pid in pids))
    own = sum(t[p][1] for p in live)
    return own, sum(t[p][2] for p in live) - own


def env_has(marker: str, name: str) -> bool:
    """Whether the first agent (a mock's process: not swarm's placeholder window) of the
    matching tmux servers has `name` set."""
    t = proc_table()
    for server in tmux_servers(marker):
        for pid in sorted(tree(t, server) - {server}):
            try:
                if b"mock" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue
                return f"\0{name}=".encode() in b"\0" + Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
    return False


def launch_parts(marker: str, agents: int) -> dict[str, float]:
    servers = tmux_servers(marker)
    own, reaped = trees_split(servers)
    t = proc_table()
    server_own = sum(t[p][1] for p in servers if p in t)
    return {
        "tmux servers": server_own,
        "agents": own - server_own,
        f"agents' launch ({reaped / max(1, agents) * 1000:.0f} ms each: shell, rc, shim)": reaped,
    }


def self_cpu() -> float:
    import resource

    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


# ============================================================================ the engine
class Timeline:
    """What the engine did when, in seconds after the layout was read (wall clock)."""

    def __init__(self, t0: float):
        self.t0 = t0
        self.spans: list[tuple[str, str, float, float]] = []  # phase, host, start, end
        self.firsts: dict[str, dict[str, float]] = {
            k: {} for k in ("window", "output", "capture", "screen_idle", "idle")
        }
        self.marks: dict[str, float] = {}
        self.lags: list[float] = []
        self.links: list[tuple[str, bool, str, float]] = []  # host, up, why, when

    def span(self, phase: str, host: str, start: float, end: float) -> None:
        self.spans.append((phase, host, start - self.t0, end - self.t0))

    def first(self, kind: str, agent: str) -> None:
        self.firsts[kind].setdefault(agent, time.time() - self.t0)

    def mark(self, what: str) -> None:
        self.marks.setdefault(what, time.time() - self.t0)


def replace(owner: Any, attr: str, new: Any) -> None:
    """Put a timed stand-in in place of an engine method (this process only)."""
    setattr(owner, attr, new)


def instrument(tl: Timeline, on_all_idle: Callable[[Any], None]) -> None:
    """Wrap engine methods with timers (this process only; the code is not changed)."""
    import asyncssh

    from swarm_tui.agents.base import AgentState
    from swarm_tui.fleet import engine, links, screens
    from swarm_tui.hosts import ssh
    from swarm_tui.tmux.protocol import Output

    def timed(owner: Any, attr: str, phase: Callable[..., str], host: Callable[..., str]) -> None:
        original = getattr(owner, attr, None)
        if original is None:  # the engine changed: time what is still there
            print(f"bench: no {getattr(owner, '__name__', owner)}.{attr} to time", file=sys.stderr)
            return

        async def wrapper(*a: Any, **k: Any) -> Any:
            start = time.time()
            try:
                return await original(*a, **k)
            finally:
                tl.span(phase(*a, **k), host(*a, **k), start, time.time())

        setattr(owner, attr, wrapper)

    def same(name: str) -> Callable[..., str]:
        return lambda *a, **k: name

    def self_name(h: Any, *a: Any, **k: Any) -> str:
        return str(h.name)

    def link_name(_: Any, link: Any, *a: Any, **k: Any) -> str:
        return str(link.name)

    timed(asyncssh, "connect", same("ssh handshake"), lambda addr, **k: str(addr))
    timed(ssh.SSHHost, "connect", same("connect (handshake + node set-up)"), self_name)
    timed(ssh.SSHHost, "_prepare", same("node set-up: files + session + relay"), self_name)
    timed(ssh.SSHHost, "shell", same("one-off command (exec channel)"), self_name)
    timed(ssh.SSHHost, "ensure_session", same("ensure_session"), self_name)
    timed(ssh.SSHHost, "open_control", same("open control channel"), self_name)
    timed(
        engine.Fleet,
        "prepare_worktrees",
        lambda _f, _l, create, *a, **k: "worktrees make" if create else "worktrees check",
        link_name,
    )
    timed(links.HostLinks, "bring_up", same("bring_up"), link_name)
    timed(
        links.HostLinks,
        "_new_windows",
        same("new windows (a node's, pipelined)"),
        lambda _s, _c, host, _agents: str(host.name),
    )
    timed(engine.Fleet, "start", same("Fleet.start"), same("-"))

    new_windows = links.HostLinks._new_windows

    async def windows(self: Any, control: Any, host: Any, agents: list[Any]) -> None:
        await new_windows(self, control, host, agents)
        for agent in agents:
            tl.first("window", agent.name)

    replace(links.HostLinks, "_new_windows", windows)

    on_event = links.HostLinks.on_event

    def event(self: Any, link: Any, ev: Any) -> None:
        if isinstance(ev, Output) and (agent := link.by_pane.get(ev.pane)) is not None:
            tl.first("output", agent.name)
        on_event(self, link, ev)

    replace(links.HostLinks, "on_event", event)

    refresh_link = screens.ScreenReader._refresh_link

    async def refreshed(self: Any, link: Any, agents: list[Any]) -> None:
        start = time.time()
        await refresh_link(self, link, agents)
        if any(a.name not in tl.firsts["capture"] for a in agents):
            tl.span("capture round (first reads)", link.name, start, time.time())
        for a in agents:
            tl.first("capture", a.name)
            if a.tracker.reading.state is AgentState.IDLE:
                tl.first("screen_idle", a.name)

    replace(screens.ScreenReader, "_refresh_link", refreshed)

    state_changed = engine.Fleet._state_changed

    def changed(self: Any, agent: Any, old: Any) -> None:
        state_changed(self, agent, old)
        if agent.state is AgentState.IDLE:
            tl.first("idle", agent.name)
            if len(tl.firsts["idle"]) == len(self.agents) and all(
                a.state is AgentState.IDLE for a in self.agents.values()
            ):
                on_all_idle(self)

    replace(engine.Fleet, "_state_changed", changed)

    link_state = engine.Fleet.link_state

    def link(self: Any, host_link: Any, up: bool, detail: str) -> None:
        tl.links.append((host_link.name, up, detail, time.time() - tl.t0))
        link_state(self, host_link, up, detail)

    replace(engine.Fleet, "link_state", link)


def engine_main(layout: str, out: str, fd: int, deadline: float) -> int:
    """The engine, as `swarm up LAYOUT --headless` runs it, timed from the inside."""
    import resource

    t0 = time.time()
    from swarm_tui import paths, up
    from swarm_tui.config.layout import load_layout
    from swarm_tui.fleet.store import Store

    loaded = load_layout(Path(layout))
    tl = Timeline(t0)
    tl.marks["imports before the layout read"] = t0 - float(os.environ["BENCH_SPAWNED"])
    pipe = os.fdopen(fd, "w", buffering=1)
    fleets: list[Any] = []

    def write(status: str) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        tl.marks["engine CPU s"] = usage.ru_utime + usage.ru_stime
        Path(out).write_text(
            json.dumps(
                {
                    "spans": tl.spans,
                    "firsts": tl.firsts,
                    "marks": tl.marks,
                    "lags": tl.lags,
                    "links": tl.links,
                    "status": status,
                }
            )
        )
        pipe.write(status + "\n")

    def all_idle(fleet: Any) -> None:
        if "all idle" not in tl.marks:
            tl.mark("all idle")
            write("idle")

    instrument(tl, all_idle)

    async def lag() -> None:  # how late the engine's loop runs a 50 ms timer
        while "all idle" not in tl.marks:
            start = time.monotonic()
            await asyncio.sleep(0.05)
            tl.lags.append(time.monotonic() - start - 0.05)

    async def overdue() -> None:
        await asyncio.sleep(deadline)
        if "all idle" not in tl.marks:
            from swarm_tui.agents.base import AgentState

            fleet = fleets[0] if fleets else None
            late = (
                []
                if fleet is None
                else [
                    f"{a.name}@{a.spec.host}: {a.state.value}, link "
                    f"{'up' if fleet.link_of(a).connected else fleet.link_of(a).detail or 'down'}"
                    f", screen {[ln for ln in a.plain_screen() if ln.strip()][-1:]}"
                    for a in fleet.agents.values()
                    if a.state is not AgentState.IDLE
                ]
            )
            tl.marks["not idle"] = len(late)
            Path(out + ".late").write_text("\n".join(late))
            write("late")

    from swarm_tui.fleet import engine

    start = engine.Fleet.start

    async def keep(self: Any) -> None:
        fleets.append(self)
        await start(self)

    replace(engine.Fleet, "start", keep)

    async def run() -> int:
        helpers = [asyncio.create_task(lag()), asyncio.create_task(overdue())]
        try:
            return await up._run_fleet(loaded, store, None)
        finally:
            for task in helpers:
                task.cancel()

    store = Store(paths.db_path(loaded.fleet))
    try:
        return asyncio.run(run())
    finally:
        store.close()


# ============================================================================ the floor
@dataclass
class FloorResult:
    created: float = 0.0  # the tmux command lines returned
    idle: dict[str, float] = field(default_factory=dict)  # pane -> first idle capture
    total: float = 0.0
    machine_cpu: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)  # CPU s during start-up, by part
    python: str = ""


async def floor(tmp: Path, plan: dict[str, list[tuple[str, str]]], deadline: float) -> FloorResult:
    """Launch every node's agents straight into its own tmux server; time until every pane
    shows the idle prompt. `plan`: node -> [(agent name, shell line)]."""
    from swarm_tui.agents.base import AgentState
    from swarm_tui.agents.mock_adapter import MockAdapter
    from swarm_tui.tmux.client import ControlClient
    from swarm_tui.tmux.protocol import Output

    conf = ROOT / "swarm_tui" / "tmux" / "swarm.conf"
    tag = secrets.token_hex(2)
    socks = {node: f"swf{tag}{node}" for node in plan}
    res = FloorResult(python=shutil.which("python3") or "python3")
    reader = MockAdapter()
    argvs = []
    for node, agents in plan.items():
        argv = [
            "tmux",
            "-L",
            socks[node],
            "-f",
            str(conf),
            "new-session",
            "-d",
            "-s",
            "floor",
            "-n",
            "_floor",
            "-x",
            "120",
            "-y",
            "40",
            "sleep 2147483647",
        ]
        for name, line in agents:
            argv += [";", "new-window", "-d", "-t", "=floor:", "-n", name, line]
        argvs.append(argv)
    procs: list[asyncio.subprocess.Process] = []
    watchers: list[asyncio.subprocess.Process] = []
    try:
        cpu0, mine0, t0 = machine_cpu(), self_cpu(), time.time()
        for argv in argvs:
            procs.append(
                await asyncio.create_subprocess_exec(
                    *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
                )
            )
        for p in procs:
            _, err = await p.communicate()
            if p.returncode:
                raise Failed(f"floor: tmux refused the windows: {err.decode().strip()}")
        res.created = time.time() - t0
        want = sum(len(a) for a in plan.values())
        done = asyncio.Event()

        async def observe(node: str) -> None:
            proc = await asyncio.create_subprocess_exec(
                "tmux",
                "-L",
                socks[node],
                "-C",
                "attach-session",
                "-t",
                "=floor",
                "-f",
                "pause-after=5,ignore-size",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            watchers.append(proc)
            dirty: set[str] = set()
            seen: set[str] = set()  # panes seen idle
            rang = asyncio.Event()

            def on_event(ev: Any) -> None:
                if isinstance(ev, Output) and ev.pane not in seen:
                    dirty.add(ev.pane)
                    rang.set()

            assert proc.stdout is not None and proc.stdin is not None

            class Writer:  # the control client writes to the observer's stdin
                def write(self, data: bytes) -> None:
                    assert proc.stdin is not None
                    proc.stdin.write(data)

                async def drain(self) -> None:
                    assert proc.stdin is not None
                    await proc.stdin.drain()

                def close(self) -> None:
                    assert proc.stdin is not None
                    proc.stdin.close()

            control = ControlClient(proc.stdout, Writer(), on_event)
            await control.start()
            reply = await control.run("list-panes -s -t =floor -F '#{pane_id}|#{window_name}'")
            panes = {
                p for p, n in (ln.split("|") for ln in reply.text().splitlines()) if n != "_floor"
            }
            dirty |= panes
            last_full = time.monotonic()
            while not done.is_set():
                now = time.monotonic()
                if now - last_full >= 1.0:  # a backstop: output seen before the attach
                    dirty |= panes - seen
                    last_full = now
                look = sorted(dirty - seen)
                dirty.clear()
                if look:
                    futures = await control.send([f"capture-pane -p -t {p}" for p in look])
                    for pane, fut in zip(look, futures, strict=True):
                        r = await fut
                        lines = [ln.decode("utf-8", "replace") for ln in r.lines]
                        if r.ok and reader.read(lines).state is AgentState.IDLE:
                            seen.add(pane)
                            res.idle.setdefault(pane + "@" + node, time.time() - t0)
                    if len(res.idle) >= want:
                        done.set()
                        break
                rang.clear()
                try:  # a doorbell, or the backstop's second
                    await asyncio.wait_for(rang.wait(), 1.0)
                except TimeoutError:
                    pass
                await asyncio.sleep(0.05)  # the observer reads a pane at most 20 times a s
            await control.close()

        tasks = [asyncio.create_task(observe(node)) for node in plan]
        try:
            await asyncio.wait_for(done.wait(), deadline)
        except TimeoutError:
            raise Failed(
                f"floor: {want - len(res.idle)} of {want} agents not idle within {deadline:.0f} s"
            ) from None
        res.total = max(res.idle.values())
        res.machine_cpu = machine_cpu() - cpu0
        res.parts = {
            **launch_parts(f"swf{tag}", want),
            "the bench (its observers' loop)": self_cpu() - mine0,
        }
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for w in watchers:
            if w.returncode is None:
                w.kill()
                await w.wait()
        for sock in socks.values():
            subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return res


def floor_plan(loaded: Any, tmp: Path) -> dict[str, list[tuple[str, str]]]:
    """Each node's agents and the exact shell line swarm would start each with."""
    from swarm_tui.agents import adapter_for
    from swarm_tui.fleet.links import launch_line
    from swarm_tui.hosts.base import LaunchContext

    bin_dir = tmp / "floor-bin"
    bin_dir.mkdir(exist_ok=True)
    mock = bin_dir / "swarm-mock-agent"
    mock.write_text(
        "#!/usr/bin/env python3\n" + (ROOT / "swarm_tui" / "agents" / "mock.py").read_text()
    )
    ctx = LaunchContext(
        python="python3",
        mock_agent=f"python3 {shlex.quote(str(mock))}",
        bin_dir=str(bin_dir),
        socket="",
    )
    plan: dict[str, list[tuple[str, str]]] = {}
    for spec in loaded.agents():
        agent = _Shim(spec, adapter_for(spec.cli))
        plan.setdefault(spec.host, []).append((spec.name, launch_line(cast(Any, agent), ctx)))
    return plan


@dataclass
class _Shim:
    """What `launch_line` reads of an agent."""

    spec: Any
    adapter: Any


# ============================================================================ swarm, outside
@dataclass
class SwarmResult:
    total: float = 0.0
    spawn_to_idle: float = 0.0
    timeline: dict[str, Any] = field(default_factory=dict)
    machine_cpu: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)  # CPU s during start-up, by part
    rest_cpu: float = 0.0
    rest_rss: float = 0.0
    peak_rss: float = 0.0
    stream_cpu: float = 0.0
    stream_rss: float = 0.0
    stream_rate: float = 0.0  # screens a second per tile reaching the watcher
    stream_tiles: int = 0
    ssh_client: bool = False  # the agents' environment has SSH_CLIENT


def vm(pid: int, key: str) -> float:
    m = re.search(rf"{key}:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(m[1]) / 1024 if m else 0.0


def tree_cpu(pid: int) -> float:
    t = proc_table()
    return sum(t[p][2] for p in tree(t, pid))


def run_swarm(a: argparse.Namespace, tmp: Path, cluster: Any, rnd: int, home: Path) -> SwarmResult:
    from swarm_tui.config.layout import load_layout

    home.mkdir(mode=0o700)  # the same path every round: the same fleet, started again
    env = {**os.environ, "SWARM_HOME": str(home), "SWARM_SSH_CONFIG": str(cluster.config)}
    env.pop("SSH_AUTH_SOCK", None)
    env.pop("TMUX", None)
    layout = tmp / f"{FLEET}.toml"
    out = tmp / f"timeline{rnd}.json"
    log = tmp / f"engine{rnd}.log"
    res = SwarmResult()
    read, write = os.pipe()
    engine: subprocess.Popen[bytes] | None = None
    try:
        sshds = [n.sshd.pid for n in cluster.nodes.values()]
        sshd0, cpu0, mine0 = trees_cpu(sshds), machine_cpu(), self_cpu()
        spawned = time.time()
        env["BENCH_SPAWNED"] = repr(spawned)
        with open(log, "wb") as f:
            engine = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--engine",
                    str(layout),
                    str(out),
                    str(write),
                    str(a.deadline),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=f,
                stderr=subprocess.STDOUT,
                pass_fds=(write,),
                start_new_session=True,
                cwd=tmp,
            )
        os.close(write)
        write = -1
        with os.fdopen(read, "r") as pipe:
            read = -1
            status = pipe.readline().strip()
        res.machine_cpu = machine_cpu() - cpu0
        res.parts = {
            "engine": tree_cpu(engine.pid),
            "nodes' sshd sessions (login shells, relays, one-off commands)": trees_cpu(sshds)
            - sshd0,
            **launch_parts(f"swarm-{FLEET}-", a.nodes * a.per_node),
            "the bench": self_cpu() - mine0,
        }
        res.ssh_client = env_has(f"swarm-{FLEET}-", "SSH_CLIENT")
        if status != "idle":
            late = Path(str(out) + ".late")
            why = late.read_text() if late.exists() else log.read_text()[-2000:]
            raise Failed(
                f"swarm: not every agent idle within {a.deadline:.0f} s "
                f"(engine exit {engine.poll()}):\n{why}"
            )
        res.spawn_to_idle = time.time() - spawned
        res.timeline = json.loads(out.read_text())
        res.total = res.timeline["marks"]["all idle"]
        res.peak_rss = vm(engine.pid, "VmHWM")
        time.sleep(a.settle)  # a benchmark: let the last redraws and events pass
        c0, t0 = tree_cpu(engine.pid), time.monotonic()
        time.sleep(a.rest)
        res.rest_cpu = (tree_cpu(engine.pid) - c0) / (time.monotonic() - t0)
        res.rest_rss = rss_mb(tree(proc_table(), engine.pid))
        if a.stream:
            loaded = load_layout(layout)
            asyncio.run(stream(a, res, engine.pid, [s.name for s in loaded.agents()], home, env))
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
        if engine is not None and engine.poll() is None:
            engine.send_signal(signal.SIGTERM)  # like `swarm stop`: agents keep running
            try:
                engine.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(engine.pid, signal.SIGKILL)
                engine.wait(5)
        reap(home)
    return res


def fleet_socket(home: Path) -> str:
    from swarm_tui.paths import tmux_socket_name

    os.environ["SWARM_HOME"] = str(home)
    try:
        return tmux_socket_name(FLEET)
    finally:
        del os.environ["SWARM_HOME"]


def reap(home: Path) -> None:
    """The fleet's tmux servers (one per node, their sockets on this shared filesystem)."""
    base = fleet_socket(home)
    for sockdir in {Path(os.environ.get("TMUX_TMPDIR", "/tmp")), Path("/tmp")}:
        for sock in (sockdir / f"tmux-{os.getuid()}").glob(f"{base}*"):
            subprocess.run(["tmux", "-L", sock.name, "kill-server"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)  # the engine's state; the nodes keep swarm's files


async def stream(
    a: argparse.Namespace,
    res: SwarmResult,
    pid: int,
    names: list[str],
    home: Path,
    env: dict[str, str],
) -> None:
    """25 tiles on a watcher while their agents work: the engine's CPU and RSS."""
    os.environ["SWARM_HOME"] = str(home)
    from swarm_tui.paths import socket_path
    from swarm_tui.protocol.client import FleetClient, NullViewListener

    class Count(NullViewListener):
        def __init__(self) -> None:
            self.screens = 0

        def screen_changed(self, name: str) -> None:
            self.screens += 1

    count = Count()
    # every node's agents, round-robin: tiles from every node
    per = a.per_node
    order = [names[node * per + i] for i in range(per) for node in range(a.nodes)]
    tiles = order[: a.tiles]
    client = FleetClient(socket_path(FLEET), count)
    try:
        view = await client.connect(tiles)
        await client.send(tiles, "stream: work on something for a while")
        deadline = time.monotonic() + 60
        while not all(view.agents[n].state == "working" for n in tiles):
            if time.monotonic() > deadline:
                raise Failed("stream: the 25 tiles' agents did not start working")
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # every tile's first screens sent
        c0, s0, t0 = tree_cpu(pid), count.screens, time.monotonic()
        await asyncio.sleep(a.stream)
        took = time.monotonic() - t0
        res.stream_cpu = (tree_cpu(pid) - c0) / took
        res.stream_rate = (count.screens - s0) / took / len(tiles)
        res.stream_rss = rss_mb(tree(proc_table(), pid))
        res.stream_tiles = len(tiles)
        if not all(view.agents[n].state == "working" for n in tiles):
            print(
                "stream: some tiles finished their work inside the window; raise --work",
                file=sys.stderr,
            )
    finally:
        await client.close()
        del os.environ["SWARM_HOME"]


# ============================================================================ report
def q(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))] if s else float("nan")


def breakdown(tl: dict[str, Any]) -> list[str]:
    """Where swarm's start-up went: each phase's span over the hosts, then per agent."""
    out = []
    spans: dict[str, list[tuple[str, float, float]]] = {}
    for phase, host, s, e in tl["spans"]:
        spans.setdefault(phase, []).append((host, s, e))
    marks = tl["marks"]
    out.append(
        f"  process start + imports before the layout read: "
        f"{marks['imports before the layout read']:6.2f} s (not counted)"
    )
    out.append(
        f"  {'phase (s after the layout was read)':44} {'first':>6} {'last':>6} "
        f"{'each: med':>9} {'max':>6} {'n':>4}"
    )
    order = [
        "ssh handshake",
        "node set-up: files + session + relay",
        "connect (handshake + node set-up)",
        "one-off command (exec channel)",
        "worktrees check",
        "worktrees make",
        "ensure_session",
        "open control channel",
        "new windows (a node's, pipelined)",
        "capture round (first reads)",
        "bring_up",
        "Fleet.start",
    ]
    for phase in order + [p for p in spans if p not in order]:
        rows = spans.get(phase)
        if not rows:
            continue
        durs = [e - s for _, s, e in rows]
        out.append(
            f"  {phase:44} {min(s for _, s, _ in rows):6.2f} "
            f"{max(e for _, _, e in rows):6.2f} {statistics.median(durs):9.3f} "
            f"{max(durs):6.3f} {len(rows):4d}"
        )
    per_host = Counter(host for host, _, _ in spans.get("one-off command (exec channel)", []))
    if per_host:
        out.append(
            f"  one-off SSH commands per host: {statistics.median(per_host.values()):.0f}"
            " (each a session channel and a shell on the node, one after another)"
        )
    f = tl["firsts"]
    out.append(
        f"  {'per agent (s after the layout was read)':44} {'first':>6} {'last':>6} {'median':>9}"
    )
    for kind, label in (
        ("window", "window created"),
        ("output", "first %output"),
        ("capture", "first capture"),
        ("screen_idle", "first capture showing the idle prompt"),
        ("idle", "state idle (after the idle hold)"),
    ):
        xs = list(f[kind].values())
        if xs:
            out.append(f"  {label:44} {min(xs):6.2f} {max(xs):6.2f} {statistics.median(xs):9.2f}")
    gaps = {
        "window -> first output (agent boot)": ("window", "output"),
        "first output -> idle prompt read (boot + read delay)": ("output", "screen_idle"),
        "idle prompt read -> state idle (the idle hold)": ("screen_idle", "idle"),
    }
    for label, (x, y) in gaps.items():
        d = [f[y][n] - f[x][n] for n in f[y] if n in f[x]]
        if d:
            out.append(f"  {label:52} median {statistics.median(d):5.2f} s, max {max(d):5.2f} s")
    failed = [(h, why, t) for h, up, why, t in tl["links"] if not up]
    if failed:
        out.append(
            f"  links down during start-up ({len(failed)}): "
            + "; ".join(f"{h} at {t:.1f} s: {why}" for h, why, t in failed[:6])
        )
    lags = tl["lags"]
    if lags:
        out.append(
            f"  engine event loop late by (a 50 ms timer): median {q(lags, 0.5) * 1000:.0f} "
            f"ms, p95 {q(lags, 0.95) * 1000:.0f} ms, max {max(lags) * 1000:.0f} ms"
        )
    out.append(f"  engine CPU during start-up: {marks['engine CPU s']:.1f} s (imports included)")
    return out


def report(a: argparse.Namespace, floors: list[FloorResult], swarms: list[SwarmResult]) -> None:
    n = a.nodes * a.per_node
    print(
        f"\n{a.nodes} real-sshd nodes x {a.per_node} mock agents = {n} agents; "
        f"{os.cpu_count()} cores; load average before: {a.load_before}"
    )
    for i, fl in enumerate(floors):
        idle = list(fl.idle.values())
        print(
            f"floor   round {i + 1}: {fl.total:6.2f} s to all {len(idle)} idle (median "
            f"{statistics.median(idle):.2f} s; tmux command lines back after "
            f"{fl.created:.2f} s); machine CPU {fl.machine_cpu:.1f} core-s; python3 = "
            f"{fl.python}"
        )
    for i, sw in enumerate(swarms):
        print(
            f"swarm   round {i + 1}: {sw.total:6.2f} s layout read -> all idle "
            f"({sw.spawn_to_idle:.2f} s from process start); machine CPU "
            f"{sw.machine_cpu:.1f} core-s"
            + (
                "; first start on these nodes"
                if i == 0
                else "; started again (as after `swarm down`: the nodes' interpreters known)"
            )
        )
    if floors and swarms:
        floor_s = statistics.median(f.total for f in floors)
        for what, runs in (("first start", swarms[:1]), ("started again", swarms[1:])):
            if runs:
                swarm_s = statistics.median(s.total for s in runs)
                print(
                    f"start-up, {what}: swarm {swarm_s:.2f} s / floor {floor_s:.2f} s = "
                    f"{swarm_s / floor_s:.2f}x (goal <= 1.3); the extra "
                    f"{swarm_s - floor_s:.1f} s"
                )
    last = swarms[-1]
    print("\nwhere swarm's start-up went (last round):")
    print("\n".join(breakdown(last.timeline)))
    print("\nCPU used during start-up (core-s), by part:")
    for name, res in (("floor", floors[-1] if floors else None), ("swarm", last)):
        if res is not None:
            rest = res.machine_cpu - sum(res.parts.values())
            print(
                f"  {name}: "
                + ", ".join(f"{k} {v:.1f}" for k, v in res.parts.items())
                + f", the rest of the machine {rest:.1f} (other processes, kernel); "
                f"all {res.machine_cpu:.1f}"
            )
    spans = last.timeline["spans"]
    sessions = sum(
        1
        for phase, *_ in spans
        if phase in ("one-off command (exec channel)", "node set-up: files + session + relay")
    )
    sshd = next((v for k, v in last.parts.items() if k.startswith("nodes' sshd")), 0.0)
    if sessions:
        print(
            f"  swarm opened {sessions} SSH sessions (set-ups that become relays, one-off "
            f"commands; control channels are streams): {sshd / sessions * 1000:.0f} ms of "
            "node CPU each (the login shell and its rc files run for every one)"
        )
    print(
        f"  the agents' environment has SSH_CLIENT: {'yes' if last.ssh_client else 'no'} "
        "(bash then reads ~/.bashrc before every agent's launch line, as for an SSH login)"
    )
    print(
        f"\nengine at rest ({a.rest:.0f} s, every agent idle, no watcher): "
        f"{last.rest_cpu * 100:.2f} % of a core (goal < 1), RSS {last.rest_rss:.0f} MB "
        f"(goal < 300; peak during start-up {last.peak_rss:.0f} MB)"
    )
    if last.stream_tiles:
        print(
            f"engine while {last.stream_tiles} tiles stream ({a.stream:.0f} s, a watcher on "
            f"the socket): {last.stream_cpu * 100:.1f} % of a core, RSS "
            f"{last.stream_rss:.0f} MB; {last.stream_rate:.1f} screens/s per tile reached "
            "the watcher"
        )


# ============================================================================ main
def interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM, SIGHUP: clean up as for Ctrl-C


def main() -> int:
    if sys.argv[1:2] == ["--engine"]:
        layout, out, fd, deadline = sys.argv[2:6]
        return engine_main(layout, out, int(fd), float(deadline))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--per-node", type=int, default=8)
    p.add_argument("--rounds", type=int, default=1, help="floor then swarm, this many times")
    p.add_argument("--rest", type=float, default=10.0, help="seconds measured at rest")
    p.add_argument("--settle", type=float, default=3.0, help="seconds before the rest window")
    p.add_argument("--stream", type=float, default=8.0, help="seconds measured streaming")
    p.add_argument("--tiles", type=int, default=25)
    p.add_argument("--work", type=float, default=40.0, help="mock agents' mean turn (s)")
    p.add_argument("--deadline", type=float, default=300.0)
    p.add_argument("--no-floor", action="store_true")
    p.add_argument("--no-stream", dest="stream", action="store_const", const=0.0)
    a = p.parse_args()
    a.tiles = min(a.tiles, a.nodes * a.per_node)
    from swarm_tui.testing import netns

    if reason := netns.available():
        print(f"bench_startup: cannot run here: {reason}", file=sys.stderr)
        return 2
    a.load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    floors: list[FloorResult] = []
    swarms: list[SwarmResult] = []
    home = Path("/tmp") / f"swb-{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory(prefix="swbs") as tmpdir:
        tmp = Path(tmpdir)
        cluster = netns.NetnsCluster(tmp / "ns")
        try:
            for i in range(1, a.nodes + 1):
                cluster.add(f"node{i:02d}")
            from swarm_tui.config.layout import load_layout

            (tmp / f"{FLEET}.toml").write_text(
                layout_text(a.nodes, a.per_node, a.work, tmp / "mock.log")
            )
            plan = floor_plan(load_layout(tmp / f"{FLEET}.toml"), tmp)
            for rnd in range(a.rounds):
                if not a.no_floor:
                    print(f"round {rnd + 1}: floor ...", file=sys.stderr, flush=True)
                    floors.append(asyncio.run(floor(tmp, plan, a.deadline)))
                print(f"round {rnd + 1}: swarm ...", file=sys.stderr, flush=True)
                swarms.append(run_swarm(a, tmp, cluster, rnd, home))
        except Failed as exc:
            print(f"bench_startup: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("bench_startup: interrupted", file=sys.stderr)
            return 130
        finally:
            cluster.close()
            for support in (Path.home() / ".cache" / "swarm").glob(f"{fleet_socket(home)}*"):
                shutil.rmtree(support, ignore_errors=True)
    report(a, floors, swarms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
