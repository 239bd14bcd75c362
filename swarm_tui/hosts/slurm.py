"""Hosts from Slurm: the nodes of a job the user holds, or of a holder job swarm submits.

Before the fleet starts, each `[hosts.KEY] slurm = {...}` entry is turned into the nodes of a
running job (`scontrol show hostnames`); the layout then names those nodes as plain SSH hosts
(config/allocation.py) and nothing after this module knows they came from Slurm. A job swarm
submitted is written down (`FLEET.slurm.json` in the state directory, 0600) so the next
`swarm up` uses it again instead of asking twice, and `swarm down` cancels it; a job the user
named is never cancelled. While a holder job waits, its pending reason and the time waited
are said every few seconds; an interrupted start cancels the job it submitted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from swarm_tui import paths
from swarm_tui.config.allocation import place_nodes, slurm_keys
from swarm_tui.config.hosts import SlurmSpec
from swarm_tui.config.layout import LoadedLayout
from swarm_tui.errors import ConfigError, SwarmError
from swarm_tui.hosts.base import JOB_SUSPENDED

COMMANDS = ("sbatch", "squeue", "scontrol", "scancel")
POLL = 2.0  # seconds between two looks at a pending job
SAY_EVERY = 15.0  # seconds between two lines about a job still pending (and on any change)
ENDED = (
    "COMPLETED",
    "CANCELLED",
    "FAILED",
    "TIMEOUT",
    "PREEMPTED",
    "NODE_FAIL",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
    "REVOKED",
    "SPECIAL_EXIT",
)

Say = Callable[[str], None]


@dataclass
class Allocation:
    """One host entry's job: its id, whether swarm submitted it, its nodes, GPUs on each."""

    key: str
    job: int
    submitted: bool
    nodes: list[str]
    gpus: int = 0
    ends: float = 0.0  # wall time its time limit ends it (0: none known)


def missing_commands() -> list[str]:
    return [c for c in COMMANDS if shutil.which(c) is None]


def missing_line() -> str:
    missing = missing_commands()
    return (
        (
            f"Slurm's {', '.join(missing)} not found on this machine: run swarm on the "
            "cluster's login node, or install Slurm's client commands (Debian: slurm-client) "
            "with the cluster's slurm.conf"
        )
        if missing
        else ""
    )


async def _run(*argv: str, timeout: float = 30.0) -> tuple[int, str, str]:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise ConfigError(missing_line() or f"{argv[0]}: not found") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise SwarmError(f"{argv[0]} did not answer within {timeout:.0f} s") from None
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def _fields(line: str) -> dict[str, str]:
    """`scontrol show job -o`: Key=Value pairs separated by spaces (values have none)."""
    out = {}
    for word in line.split():
        key, eq, value = word.partition("=")
        if eq and key not in out:
            out[key] = value
    return out


async def job_info(job: int) -> dict[str, str]:
    """The job as `scontrol show job -o` tells it ({} once Slurm forgot it)."""
    rc, out, err = await _run("scontrol", "show", "job", "-o", str(job))
    if rc != 0:
        if "Invalid job id" in err:
            return {}
        raise SwarmError(f"scontrol show job {job}: {err.strip() or out.strip()}")
    return _fields(out.strip().splitlines()[0] if out.strip() else "")


async def hostnames(nodelist: str) -> list[str]:
    rc, out, err = await _run("scontrol", "show", "hostnames", nodelist)
    if rc != 0:
        raise SwarmError(f"scontrol show hostnames {nodelist}: {err.strip()}")
    return out.split()


def _gpus(info: dict[str, str]) -> int:
    """GPUs per node the job holds (TresPerNode=gres/gpu:8 or gres:gpu:8), 0 unknown."""
    tres = info.get("TresPerNode", "")
    for part in tres.split(","):
        name, _, count = part.rpartition(":")
        if name.endswith("gpu") and count.isdigit():
            return int(count)
    return 0


def sbatch_argv(fleet: str, key: str, spec: SlurmSpec) -> list[str]:
    argv = [
        "sbatch",
        "--parsable",
        f"--job-name=swarm-{fleet}-{key}",
        f"--nodes={spec.nodes}",
        "--output=/dev/null",
        "--error=/dev/null",
    ]
    for flag, value in (
        ("--partition", spec.partition),
        ("--time", spec.time),
        ("--account", spec.account),
        ("--qos", spec.qos),
    ):
        if value:
            argv.append(f"{flag}={value}")
    if spec.gpus_per_node:
        argv.append(f"--gpus-per-node={spec.gpus_per_node}")
    # the holder: it only keeps the nodes; the agents run in tmux, reached over SSH
    return [*argv, *spec.sbatch, "--wrap", "exec sleep infinity"]


async def submit(fleet: str, key: str, spec: SlurmSpec) -> int:
    rc, out, err = await _run(*sbatch_argv(fleet, key, spec))
    if rc != 0:
        reason = (err.strip() or out.strip() or f"exit {rc}").splitlines()[-1]
        raise ConfigError(f"hosts.{key}: Slurm refused the allocation: {reason}")
    first = out.strip().split(";")[0]
    if not first.isdigit():
        raise SwarmError(f"hosts.{key}: sbatch answered {out.strip()!r}, not a job id")
    return int(first)


async def cancel(job: int) -> str:
    rc, _, err = await _run("scancel", str(job))
    return "" if rc == 0 else err.strip() or f"scancel exit {rc}"


async def wait_running(key: str, job: int, say: Say, poll: float = POLL) -> dict[str, str]:
    """Until the job runs; says its pending reason and the time waited now and then."""
    started = time.monotonic()
    said, last = 0.0, ""
    while True:
        info = await job_info(job)
        state = info.get("JobState", "")
        if state == "RUNNING":
            return info
        if not info or state in ENDED:
            why = info.get("Reason", "None")
            raise ConfigError(
                f"hosts.{key}: Slurm job {job} is {state or 'gone'}"
                f"{f' ({why})' if why != 'None' else ''}: its nodes cannot be "
                "used (drop `job` to let swarm ask for an allocation, or name a "
                "running job)"
            )
        now = time.monotonic()
        reason = info.get("Reason", "None").replace("_", " ")
        line = state.lower() + (f" ({reason})" if reason != "None" else "")
        if (line != last or now - said >= SAY_EVERY) and (
            reason != "None" or now - started >= POLL
        ):
            waited = int(now - started)
            say(f"hosts.{key}: Slurm job {job} {line}, waiting {waited // 60}:{waited % 60:02d}")
            said, last = now, line
        await asyncio.sleep(poll)  # Slurm has no event to wait on: look again


HOLDING = ("RUNNING", "CONFIGURING", "SUSPENDED", "RESIZING")


def ended(info: dict[str, str]) -> str:
    """ "" while a job (as `job_info` read it) holds its nodes; else what became of it."""
    if not info:
        return "is gone"
    state = info.get("JobState", "")
    return "" if state in HOLDING else f"ended ({state.lower()})"


async def probe(job: int) -> str:
    """ "" while the job runs on its nodes; JOB_SUSPENDED while it holds them stopped; else
    what became of it ("ended (preempted)")."""
    try:
        info = await job_info(job)
    except SwarmError:
        return ""  # Slurm did not answer now: asked again later, nothing is lost meanwhile
    return JOB_SUSPENDED if info.get("JobState") == "SUSPENDED" else ended(info)


async def check(key: str, spec: SlurmSpec, srun: bool) -> tuple[bool, str]:
    """What `swarm doctor` says of a Slurm entry: the job named is running, or the
    partition asked for exists; srun is there when it is the transport."""
    if srun and shutil.which("srun") is None:
        return False, (
            'srun not found on this machine (transport = "srun" runs every '
            "command through it): install Slurm's client commands"
        )
    if spec.job is not None:
        info = await job_info(spec.job)
        if why := ended(info):
            return False, f"Slurm job {spec.job} {why}: name a running job"
        return True, f"Slurm job {spec.job} runs on {info.get('NodeList', '?')}"
    if spec.partition:
        rc, _, err = await _run("scontrol", "show", "partition", spec.partition)
        if rc != 0:
            return False, (
                f"partition {spec.partition} does not exist here (`sinfo -s` lists them)"
            )
    return True, (
        f"{spec.nodes} node{'s' * (spec.nodes != 1)} to ask for"
        f"{' in ' + spec.partition if spec.partition else ''} (`swarm up` submits "
        "the job)"
    )


def _state_file(fleet: str) -> Path:
    return paths.state_dir() / f"{paths.fleet_slug(fleet)}.slurm.json"


def recorded(fleet: str) -> dict[str, Allocation]:
    try:
        data = json.loads(_state_file(fleet).read_text(encoding="utf-8"))
        return {k: Allocation(**v) for k, v in data.items()}
    except (OSError, ValueError, TypeError):
        return {}


def _record(fleet: str, allocations: dict[str, Allocation]) -> None:
    path = _state_file(fleet)
    if not allocations:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({k: asdict(v) for k, v in allocations.items()}, f)
    tmp.replace(path)


def placed(loaded: LoadedLayout, allocations: dict[str, Allocation]) -> LoadedLayout:
    layout = loaded.layout
    for key, a in allocations.items():
        layout = place_nodes(layout, key, a.nodes, a.gpus, f"Slurm job {a.job}", a.ends, a.job)
    return loaded.model_copy(update={"layout": layout})


def end_time(info: dict[str, str]) -> float:
    """The job's EndTime (Slurm's local time, 2026-12-05T10:00:00) as wall time; 0 none."""
    try:
        return time.mktime(time.strptime(info.get("EndTime", ""), "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return 0.0


async def allocate(loaded: LoadedLayout, say: Say) -> LoadedLayout:
    """The layout with every Slurm entry's nodes in place: a job swarm submitted before and
    still holds is used again; else the named job, or a new holder job, once it runs. A
    start interrupted meanwhile cancels what it submitted."""
    keys = slurm_keys(loaded.layout)
    if not keys:
        return loaded
    if missing := missing_line():
        raise ConfigError(missing)
    fleet = loaded.fleet
    known = recorded(fleet)
    done: dict[str, Allocation] = {}
    fresh: list[int] = []  # submitted by this start
    try:
        for key in keys:
            spec = loaded.layout.hosts[key].slurm
            assert spec is not None
            old = known.get(key)
            submitted = spec.job is None
            if old is not None and old.submitted and submitted:
                info = await job_info(old.job)
                if info.get("JobState") in ("RUNNING", "PENDING", "CONFIGURING"):
                    job = old.job  # still held from the last start: never ask twice
                    say(
                        f"hosts.{key}: Slurm job {job} (submitted by swarm before) is "
                        f"{info['JobState'].lower()}"
                    )
                else:
                    job = 0
            else:
                job = 0
            if not job:
                if submitted:
                    job = await submit(fleet, key, spec)
                    fresh.append(job)
                    say(
                        f"hosts.{key}: submitted Slurm job {job} for {spec.nodes} node"
                        f"{'s' * (spec.nodes != 1)} (`swarm down` cancels it)"
                    )
                else:
                    job = spec.job or 0
            done[key] = Allocation(key, job, submitted, [])
            _record(fleet, {**known, **done})
            info = await wait_running(key, job, say)
            nodes = await hostnames(info.get("NodeList", ""))
            gpus = spec.gpus_per_node or _gpus(info)
            ends = end_time(info)
            done[key] = Allocation(key, job, submitted, nodes, gpus, ends)
            _record(fleet, {**known, **done})
            say(
                f"hosts.{key}: Slurm job {job} runs on {', '.join(nodes)}"
                f"{' until ' + info['EndTime'] if ends else ''}"
            )
    except BaseException:  # interrupted (Ctrl-C, stop) or refused: no allocation left burning
        for job in fresh:
            err = await asyncio.shield(cancel(job))
            say(
                f"Slurm job {job}, submitted by this start, "
                + (f"could not be cancelled: {err} (`scancel {job}`)" if err else "cancelled")
            )
        _record(fleet, {k: v for k, v in {**known, **done}.items() if v.job not in fresh})
        raise
    return placed(loaded, done)


def resolved(loaded: LoadedLayout) -> LoadedLayout:
    """The layout with the nodes of the allocations the last start recorded (for `swarm
    down` and `swarm doctor`, which never ask Slurm for nodes); entries with none are left
    out of the hosts, and so are their agents."""
    keys = slurm_keys(loaded.layout)
    if not keys:
        return loaded
    known = {k: a for k, a in recorded(loaded.fleet).items() if k in keys and a.nodes}
    return placed(loaded, known) if len(known) == len(keys) else _without(loaded, keys, known)


def _without(loaded: LoadedLayout, keys: list[str], known: dict[str, Allocation]) -> LoadedLayout:
    layout = placed(loaded, known).layout
    gone = set(keys) - set(known)
    layout = layout.model_copy(
        update={
            "hosts": {k: v for k, v in layout.hosts.items() if k not in gone},
            "groups": [g for g in layout.groups if not set(g.hosts) & gone],
            "agents": [a for a in layout.agents if a.host not in gone],
        }
    )
    return loaded.model_copy(update={"layout": layout})


async def release(fleet: str) -> list[str]:
    """After `swarm down`: cancel the jobs swarm submitted (never one the user named); one
    line each."""
    lines = []
    known = recorded(fleet)
    for key, a in known.items():
        why = await probe(a.job)
        if why:
            lines.append(f"hosts.{key}: Slurm job {a.job} {why} already")
        elif a.submitted:
            err = await cancel(a.job)
            lines.append(
                f"hosts.{key}: Slurm job {a.job} "
                + (f"not cancelled: {err}" if err else "cancelled")
            )
        else:
            lines.append(f"hosts.{key}: Slurm job {a.job} is yours: left running")
    _record(fleet, {})
    return lines
