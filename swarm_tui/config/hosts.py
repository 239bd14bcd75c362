"""Hosts of a layout: the local machine, or nodes reached over SSH; ranges for big clusters."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swarm_tui.config.work import seconds

RANGE = re.compile(r"^(?P<pre>[^\[\]]*)\[(?P<lo>\d+)-(?P<hi>\d+)\](?P<post>[^\[\]]*)$")
HOST_NAME = re.compile(r"^[A-Za-z][\w.-]{0,62}$")
LOCAL = "local"


SLURM_WORD = re.compile(r"^[\w.:+=,/@-]{1,128}$")  # a partition, account, qos or time


class SlurmSpec(BaseModel):
    """Nodes from Slurm: a job the user holds, or an allocation swarm asks for (a holder job
    it submits, and cancels at `swarm down`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    job: int | None = Field(None, ge=1, description="A job you already hold: its nodes.")
    partition: str = Field("", description="Partition to submit the holder job to.")
    nodes: int = Field(0, ge=0, le=1024, description="Nodes to ask for.")
    gpus_per_node: int = Field(0, ge=0, le=64, description="GPUs to ask for on each node.")
    time: str = Field("", description='Time limit, as sbatch takes it: "24:00:00".')
    account: str = Field("", description="Account to charge.")
    qos: str = Field("", description="Quality of service.")
    sbatch: list[str] = Field(default_factory=list, description="More sbatch options.")
    handoff_before: str = Field(
        "15m",
        description="This long before the job's time limit, "
        "every agent on its nodes is asked for a handoff note, so "
        "the next allocation can go on with the work.",
    )

    @field_validator("handoff_before")
    @classmethod
    def _before(cls, v: str) -> str:
        seconds(v)  # raises with what to write instead
        return v

    @field_validator("partition", "time", "account", "qos")
    @classmethod
    def _word(cls, v: str) -> str:
        if v and not SLURM_WORD.match(v):
            raise ValueError("one word, as sbatch takes it")
        return v

    @model_validator(mode="after")
    def _one_source(self) -> SlurmSpec:
        if self.job is not None and self.nodes:
            raise ValueError(
                "either job (one you hold) or nodes (an allocation to ask for), not both"
            )
        if self.job is None and not self.nodes:
            raise ValueError("set job = ID (a job you hold) or nodes = N (to ask for them)")
        return self


class HostSpec(BaseModel):
    """One node: how to reach it over SSH and what it offers; or, with `slurm`, the nodes
    of a Slurm allocation, each reached the same way."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ssh: str = Field(
        "",
        description="SSH destination: an alias of ~/.ssh/config, host, user@host or "
        "user@host:port. In a range entry such as [hosts.\"node[01-16]\"], '{}' stands for "
        "the number; in a slurm entry, for the node's name (the default: the name itself).",
    )
    gpus: int = Field(0, ge=0, le=64, description="GPUs on the node (for pinning agents).")
    python: str = Field(
        "python3",
        description="Python 3 on the node, for the swarm client. With the default, swarm's "
        "node relay runs on the first python3 on PATH that is a program rather than a "
        "shim (pyenv, asdf), 3.8 or newer.",
    )
    tmux: str = Field("tmux", description="tmux on the node.")
    slurm: SlurmSpec | None = Field(
        None,
        description="Nodes from a Slurm job: "
        "{ job = ID } or { partition, nodes, gpus_per_node, "
        "time, account }.",
    )
    transport: Literal["ssh", "srun"] = Field(
        "ssh",
        description="How swarm reaches the node: 'ssh', or 'srun' (a slurm entry's "
        "nodes, through `srun --overlap` into the job: no SSH to compute nodes).",
    )
    # set by swarm for the nodes of a Slurm job (hosts/slurm.py), not written in layouts:
    # what holds the node ("Slurm job 123"), when that ends and when to ask for handoffs
    lease: str = Field("", description="(set by swarm) what holds the node.")
    lease_ends: float = Field(0.0, description="(set by swarm) when the lease ends.")
    handoff_at: float = Field(0.0, description="(set by swarm) when agents hand off.")
    job: int = Field(0, description="(set by swarm) the Slurm job holding the node.")

    @field_validator("ssh")
    @classmethod
    def _ssh(cls, v: str) -> str:
        if v and (any(c.isspace() for c in v) or v.startswith("-")):
            raise ValueError("must be an SSH destination such as gpu-node-03 or user@host:22")
        return v

    @model_validator(mode="after")
    def _reachable(self) -> HostSpec:
        if not self.ssh and self.slurm is None and not self.job:
            raise ValueError(
                "set ssh (an SSH destination such as gpu-node-03) or slurm (nodes of a Slurm job)"
            )
        if self.transport == "srun" and self.slurm is None and not self.job:
            raise ValueError(
                'transport = "srun" reaches the nodes of a Slurm job: add '
                "slurm = { job = ID } or slurm = { nodes = N, ... }"
            )
        return self


def expand_range(pattern: str) -> list[tuple[str, str]]:
    """`node[01-03]` -> [("node01", "01"), ("node02", "02"), ("node03", "03")]; no range ->
    [(pattern, "")]. Raises ValueError on a backwards or huge range."""
    m = RANGE.match(pattern)
    if not m:
        if "[" in pattern or "]" in pattern:
            raise ValueError(f"{pattern!r}: a range looks like node[01-16]")
        return [(pattern, "")]
    lo, hi = int(m["lo"]), int(m["hi"])
    if hi < lo or hi - lo >= 1024:
        raise ValueError(f"{pattern!r}: range must go up, at most 1024 entries")
    width = len(m["lo"])
    return [(f"{m['pre']}{i:0{width}d}{m['post']}", f"{i:0{width}d}") for i in range(lo, hi + 1)]


def parse_destination(dest: str) -> tuple[str | None, str, int | None]:
    """`user@host:port` -> (user, host, port); parts not given are None."""
    user, _, rest = dest.rpartition("@")
    host, port = rest, None
    if rest.startswith("["):  # [v6::addr]:port
        close = rest.find("]")
        host, tail = rest[1:close], rest[close + 1 :]
        port = int(tail[1:]) if tail.startswith(":") and tail[1:].isdigit() else None
    elif rest.count(":") == 1:
        h, p = rest.split(":")
        if p.isdigit():
            host, port = h, int(p)
    return (user or None), host, port
