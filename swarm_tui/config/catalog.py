"""How big a layout's fleet is, in one phrase for `swarm layouts`: a Slurm entry counts as
the nodes it asks for (its agents are placed on each), or, for a job already held, as
"per node of Slurm job N" (how many nodes it has is Slurm's to say, not the file's)."""

from __future__ import annotations

from swarm_tui.config.allocation import place_nodes
from swarm_tui.config.layout import LoadedLayout


def fleet_size(loaded: LoadedLayout) -> str:
    """`12 agents on this machine`, `129 agents on 17 hosts`, or `1 agent on this machine
    + 8 per node of Slurm job 4711`."""
    layout = loaded.layout
    held: dict[str, int] = {}  # host key -> the Slurm job it names
    for key, spec in layout.hosts.items():
        if spec.slurm is None:
            continue
        if spec.slurm.job is not None:
            held[key] = spec.slurm.job
        else:  # an allocation to ask for: as many nodes as it asks for
            nodes = [f"{key[:40]}-slurm-{i}" for i in range(spec.slurm.nodes)]
            layout = place_nodes(layout, key, nodes)
    agents = LoadedLayout(path=loaded.path, layout=layout).agents()
    here = [a for a in agents if a.host not in held]
    hosts = sorted({a.host for a in here})
    where = "this machine" if hosts == ["local"] else f"{len(hosts)} hosts"
    size = f"{len(here)} agent{'s' if len(here) != 1 else ''} on {where}" if here else ""
    for key, job in held.items():
        per_node = sum(g.per_host for g in layout.groups if key in g.hosts)
        lone = sum(1 for a in layout.agents if a.host == key)  # on its nodes in turn
        if per_node:
            size += (" + " if size else "") + f"{per_node} per node of Slurm job {job}"
        if lone:
            size += (" + " if size else "") + f"{lone} on the nodes of Slurm job {job}"
    return size or "no agents"
