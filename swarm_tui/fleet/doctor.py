"""`swarm doctor`: check every host of a layout, one line each, all at once."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass

from swarm_tui.agents.base import command_line
from swarm_tui.agents.registry import adapter_for
from swarm_tui.config.allocation import slurm_keys
from swarm_tui.config.layout import LoadedLayout, ResolvedAgent
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.worktrees import prepare
from swarm_tui.hosts import slurm
from swarm_tui.hosts.base import Host
from swarm_tui.hosts.registry import make_hosts

NVIDIA_COUNT = (
    "command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name "
    "--format=csv,noheader | wc -l || echo 0"
)


@dataclass(frozen=True)
class HostReport:
    host: str
    ok: bool
    line: str


def programs(agents: list[ResolvedAgent], python: str) -> list[tuple[str, str]]:
    """The programs a host's agents need (and Python for the client), each with the PATH it is
    looked up in ("" for the host's own): each CLI's executable as its adapter launches it,
    i.e. the layout's `command` where it names one, on the PATH the layout gives the agent."""
    needed = [(python, "")]
    for agent in agents:
        if agent.cli == "generic":
            words = shlex.split(agent.command)
        else:
            words = [] if agent.cli == "mock" else adapter_for(agent.cli).program(agent)
        wanted = (words[0] if words else "", agent.env.get("PATH", ""))
        if wanted[0] and wanted not in needed:
            needed.append(wanted)
    return needed


def _probe(program: str, path: str) -> str:
    """Shell words that print y if `program` is found (on `path`, when given), else n."""
    look = f"command -v {command_line([program])} >/dev/null 2>&1"
    if path:
        look = f"(PATH={shlex.quote(path)}; {look})"
    return f"{look} && echo y || echo n"


async def check_host(host: Host, agents: list[ResolvedAgent], fleet: str = "") -> HostReport:
    try:
        await host.connect()  # reachable, host key trusted, tmux present and new enough
        ctx = host.launch_context()
        needed = programs(agents, ctx.python)
        probe = "; ".join(_probe(p, path) for p, path in needed)
        rc, out = await host.shell(f"{probe}; tmux -V; {NVIDIA_COUNT}", timeout=20)
        lines = out.splitlines()
        found: dict[str, bool] = {}
        for (p, _), ln in zip(needed, lines[: len(needed)], strict=False):
            found[p] = found.get(p, True) and ln.strip() == "y"
        tmux = next((ln for ln in lines if ln.startswith("tmux ")), "tmux ?")
        gpus = lines[-1].strip() if lines and lines[-1].strip().isdigit() else "0"
        missing = [p for p, ok in found.items() if not ok]
        clis = " ".join(f"{p}{'' if ok else ' MISSING'}" for p, ok in found.items())
        line = f"{tmux}; programs: {clis}; GPUs: {gpus}; agents: {len(agents)}"
        if any(a.worktree for a in agents):
            _, problems = await prepare(
                host, fleet, [a for a in agents if a.worktree], create=False
            )
            if problems:
                return HostReport(host.name, False, f"{line} — " + "; ".join(problems))
            line += f"; worktrees: {sum(a.worktree for a in agents)} ok"
        if missing:
            return HostReport(
                host.name, False, f"{line} — install {', '.join(missing)} on {host.name}"
            )
        return HostReport(host.name, True, line)
    except SwarmError as exc:
        return HostReport(host.name, False, str(exc).removeprefix(f"{host.name}: "))
    finally:
        try:  # a check leaves nothing running: not the session (and tmux server) it made
            await host.discard_session()
        except SwarmError:
            pass
        await host.close()


async def doctor(loaded: LoadedLayout) -> list[HostReport]:
    reports = []
    if slurm_keys(loaded.layout):  # its nodes: those of the allocation the last start held
        missing = slurm.missing_line()
        reports.append(
            HostReport(
                "slurm", not missing, missing or "sbatch, squeue, scontrol and scancel found"
            )
        )
        held = slurm.recorded(loaded.fleet)
        for key in slurm_keys(loaded.layout):
            spec = loaded.layout.hosts[key]
            assert spec.slurm is not None
            if missing:
                continue
            ok, line = await slurm.check(key, spec.slurm, spec.transport == "srun")
            if ok and not (key in held and held[key].nodes):
                line += "; its nodes are checked once swarm holds them"
            reports.append(HostReport(key, ok, line))
        loaded = slurm.resolved(loaded)
    hosts = make_hosts(loaded)
    agents = loaded.agents()
    return reports + list(
        await asyncio.gather(
            *(
                check_host(h, [a for a in agents if a.host == key], loaded.fleet)
                for key, h in hosts.items()
            )
        )
    )
