"""A layout whose host entry names a Slurm allocation, once the allocation's nodes are known:
the entry becomes one plain SSH host per node, and every group or agent that named the entry
is spread over those nodes. What runs the fleet sees hosts, never where they came from."""

from __future__ import annotations

from swarm_tui.config.hosts import HOST_NAME, LOCAL, HostSpec
from swarm_tui.config.layout import Layout
from swarm_tui.config.work import seconds
from swarm_tui.errors import ConfigError


def slurm_keys(layout: Layout) -> list[str]:
    return [key for key, spec in layout.hosts.items() if spec.slurm is not None]


def place_nodes(
    layout: Layout,
    key: str,
    nodes: list[str],
    gpus: int = 0,
    lease: str = "",
    ends: float = 0.0,
    job: int = 0,
) -> Layout:
    """`layout` with host entry `key` replaced by `nodes` (each reached by the entry's `ssh`
    with `{}` as the node's name; GPUs: `gpus` when the allocation says, else the entry's).
    A group on `key` gets its `per_host` agents on every node; a lone agent on `key` goes
    to the nodes in turn. `lease` says what holds the nodes until `ends` (wall time)."""
    spec = layout.hosts[key]
    before = seconds(spec.slurm.handoff_before) if spec.slurm is not None else 0.0
    if not nodes:
        raise ConfigError(f"hosts.{key}: the Slurm job has no nodes")
    taken = set(layout.hosts) - {key}
    for node in nodes:
        if not HOST_NAME.match(node) or node == LOCAL or node in taken:
            raise ConfigError(
                f"hosts.{key}: node {node!r} of the Slurm job cannot be a host "
                "key here (a name the layout already uses, or not a host name)"
            )
    pattern = spec.ssh or "{}"
    hosts: dict[str, HostSpec] = {}
    for k, v in layout.hosts.items():
        if k != key:
            hosts[k] = v
            continue
        for node in nodes:
            hosts[node] = v.model_copy(
                update={
                    "ssh": pattern.replace("{}", node),
                    "gpus": gpus or v.gpus,
                    "slurm": None,
                    "lease": lease,
                    "lease_ends": ends,
                    "job": job,
                    "handoff_at": ends - before if ends and before else 0.0,
                }
            )
    groups = [
        g.model_copy(update={"hosts": [n for h in g.hosts for n in (nodes if h == key else [h])]})
        for g in layout.groups
    ]
    agents, turn = [], 0
    for a in layout.agents:
        if a.host == key:
            a = a.model_copy(update={"host": nodes[turn % len(nodes)]})
            turn += 1
        agents.append(a)
    return layout.model_copy(update={"hosts": hosts, "groups": groups, "agents": agents})
