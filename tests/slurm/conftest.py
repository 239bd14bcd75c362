"""Fixtures for the Slurm tests: a real Slurm cluster (munged, slurmctld, one slurmd per
node) whose nodes are real-sshd network namespaces; skipped with the reason where it cannot
run, a failure in CI (CI=true), where it must."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.testing import slurm as slurm_testing
from swarm_tui.testing.slurm import SlurmCluster
from tests.ssh.conftest import home, real_nodes

__all__ = ["home"]  # the ssh tests' SWARM_HOME fixture, for these too

NODES = ("gpu01", "gpu02")


def require_slurm() -> None:
    reason = slurm_testing.available()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Slurm tests cannot run in CI: {reason}")
        pytest.skip(f"Slurm tests skipped: {reason}")


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlurmCluster]:
    """Slurm on nodes gpu01 and gpu02 (8 fake GPUs, 16 CPUs each; partitions `gpu`, the
    default, and `debug`), all idle; SLURM_CONF (and SBATCH_OUTPUT) set so sbatch & co.
    find it, and SWARM_SSH_CONFIG so swarm reaches the nodes by their Slurm names."""
    require_slurm()
    with (
        real_nodes(tmp_path, monkeypatch, *NODES) as nodes,
        SlurmCluster(tmp_path / "slurm", nodes, list(NODES)) as cluster,
    ):
        for key, value in cluster.env.items():
            monkeypatch.setenv(key, value)
        yield cluster
