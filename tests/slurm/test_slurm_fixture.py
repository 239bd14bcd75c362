"""The Slurm test cluster is a real one: sbatch, squeue, scontrol, srun and scancel work
against it, its nodes are the real-sshd nodes swarm reaches over SSH by the same names, it
refuses what it cannot give with sbatch's one-line reasons, drained and killed nodes behave
as on a real cluster, and closing it leaves no process behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm_tui.testing.slurm import SlurmCluster
from swarm_tui.testing.waiting import wait_until
from tests.slurm.conftest import require_slurm
from tests.ssh.conftest import real_nodes


def ssh(cluster: SlurmCluster, node: str, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "ssh",
            "-F",
            str(cluster.nodes.config),
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            node,
            command,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_holder_job_runs_on_the_nodes_swarm_reaches_over_ssh(slurm: SlurmCluster) -> None:
    # as swarm runs it: SLURM_CONF from the environment only
    r = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--nodes=2",
            "--gpus-per-node=8",
            "--output=/dev/null",
            "--wrap",
            "sleep 600",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0 and r.stdout.strip().isdigit(), r.stderr
    job = r.stdout.strip()
    info = slurm.wait_state(job, "RUNNING")
    assert info["TresPerNode"] == "gres:gpu:8"
    r = subprocess.run(
        ["scontrol", "show", "hostnames", info["NodeList"]],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.stdout.split() == ["gpu01", "gpu02"], r.stderr
    r = subprocess.run(
        ["squeue", "-h", "-j", job, "-o", "%N %T"], capture_output=True, text=True, timeout=30
    )
    assert r.stdout == "gpu[01-02] RUNNING\n", r.stderr

    # a step on gpu02 runs in gpu02's network namespace, with the job's GPUs
    r = slurm.run(
        "srun",
        "--jobid",
        job,
        "--overlap",
        "-w",
        "gpu02",
        "sh",
        "-c",
        'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"; ip -o -4 addr show scope global',
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "gpu02 0,1,2,3,4,5,6,7"
    assert f" {slurm.nodes.nodes['gpu02'].addr}/" in r.stdout
    assert f" {slurm.nodes.nodes['gpu01'].addr}/" not in r.stdout

    # each node of the job is reached over SSH by its Slurm name, and is that node
    for node in ("gpu01", "gpu02"):
        r = ssh(slurm, node, "ip -o -4 addr show scope global")
        assert r.returncode == 0, r.stderr
        assert f" {slurm.nodes.nodes[node].addr}/" in r.stdout

    # scancel ends it; the nodes are free again
    assert slurm.run("scancel", job).returncode == 0
    slurm.wait_state(job, "CANCELLED")
    slurm.wait_idle()


def test_sbatch_refuses_what_the_cluster_cannot_give_in_one_line(slurm: SlurmCluster) -> None:
    refused = {
        ("--partition=nope",): "Invalid partition name specified",
        ("--gpus-per-node=9",): "Requested node configuration is not available",
        ("--nodes=3",): "Node count specification invalid",
        ("--partition=debug", "--time=1:00:00"): "Requested time limit is invalid",
    }
    for args, reason in refused.items():
        r = slurm.run("sbatch", "--parsable", *args, "--wrap", "true")
        assert r.returncode != 0 and not r.stdout.strip(), (args, r.stdout)
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("sbatch: error: Batch job submission failed: " + reason), last
    assert slurm.run("squeue", "-h").stdout == ""


def test_a_drained_node_holds_a_job_back_and_a_killed_one_fails_it(slurm: SlurmCluster) -> None:
    slurm.drain("gpu02", "maintenance")
    assert slurm.states() == {"gpu01": "idle", "gpu02": "drain"}
    job = slurm.submit("--nodes=2", "--no-requeue", "--output=/dev/null", "--wrap", "sleep 600")
    info = wait_until(
        lambda: (i := slurm.job(job)).get("Reason", "None") != "None" and i, 20, "a pending reason"
    )
    assert info["JobState"] == "PENDING", info
    assert "ReqNodeNotAvail" in info["Reason"] or "Resources" in info["Reason"], info
    slurm.resume("gpu02")
    slurm.wait_state(job, "RUNNING")

    slurm.kill_node("gpu01")
    slurm.wait_state(job, "NODE_FAIL")
    assert slurm.states()["gpu01"].startswith("down")
    slurm.start_node("gpu01")  # ReturnToService=2: back once it registers
    slurm.wait_idle()


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # dead, not yet reaped


def test_close_leaves_no_process_and_the_ssh_node_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_slurm()
    with real_nodes(tmp_path, monkeypatch, "gpu01") as nodes:
        cluster = SlurmCluster(tmp_path / "slurm", nodes, ["gpu01"], gpus_per_node=0)
        try:
            pidfile = tmp_path / "job.pid"
            job = cluster.submit(
                "--output=/dev/null", "--wrap", f"echo $$ > {pidfile}; exec sleep 600"
            )
            cluster.wait_state(job, "RUNNING")
            job_pid = int(
                wait_until(
                    lambda: pidfile.exists() and pidfile.read_text().strip(), 10, "the job's pid"
                )
            )
            daemons = [
                p.pid
                for p in (cluster.munged, cluster.slurmctld, *cluster.slurmd.values())
                if p is not None
            ]
        finally:
            cluster.close()
        wait_until(
            lambda: all(_gone(p) for p in [*daemons, job_pid]),
            10,
            "slurm's daemons and the job to be gone",
        )
        leftovers = subprocess.run(
            ["pgrep", "-af", f"{cluster.run_dir}|{cluster.conf}"], capture_output=True, text=True
        ).stdout
        assert leftovers == ""
        assert not cluster.run_dir.exists()
        assert (
            subprocess.run(["ip", "link", "show", cluster.ctl_link], capture_output=True).returncode
            != 0
        )
        cluster.close()  # twice is harmless
        r = ssh(cluster, "gpu01", "true")
        assert r.returncode == 0, r.stderr
