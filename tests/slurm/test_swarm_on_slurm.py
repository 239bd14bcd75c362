"""swarm on a real Slurm cluster (tests/slurm/conftest.py): `swarm up` submits a holder job,
runs the agents on its nodes over SSH with the job's GPUs, asks them for handoff notes before
its time limit, and `swarm down` cancels it; a job the user holds is used and never
cancelled; a request Slurm refuses is one line, exit 2; an interrupted start while the job
waits cancels it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from swarm_tui.testing.slurm import SlurmCluster
from swarm_tui.testing.waiting import wait_until
from tests.ssh.test_cluster import FAST

FLEET = "ssh"  # the `home` fixture reaps this fleet's tmux servers, on the nodes too


def layout(tmp: Path, slurm: str, per_host: int = 2) -> Path:
    logs = tmp / "logs"
    logs.mkdir(exist_ok=True)
    path = tmp / f"{FLEET}.toml"
    path.write_text(
        f'name = "{FLEET}"\n[defaults]\ncli = "mock"\n'
        f'env = {{ SWARM_MOCK_LOG = "{logs}/agent.log" }}\n'
        f"[hosts.gpu]\nslurm = {slurm}\n"
        f'[[groups]]\nhosts = ["gpu"]\nper_host = {per_host}\nnames = ["Gauss", "Noether", '
        f'"Euler", "Riemann"]\ngpus_per_agent = 4\nargs = {FAST}\n'
    )
    return path


def swarm(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swarm_tui.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Engine:
    """`swarm up LAYOUT --headless` in the background, its output in a file."""

    def __init__(self, path: Path, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "swarm_tui.cli", "up", str(path), "--headless"],
            stdout=out.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def said(self) -> str:
        return self.out.read_text() if self.out.exists() else ""

    def wait_for(self, text: str, timeout: float = 60) -> None:
        wait_until(
            lambda: text in self.said() or self.proc.poll() is not None,
            timeout,
            f"{text!r} from the engine",
            self.said,
        )
        assert text in self.said(), self.said()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)


def received(tmp: Path) -> list[dict[str, str]]:
    log = tmp / "logs" / "agent.log"
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def jobs(slurm: SlurmCluster) -> list[str]:
    return slurm.run("squeue", "-h", "-o", "%i %T %j").stdout.split("\n")[:-1]


def test_up_submits_runs_on_its_nodes_asks_for_handoffs_and_down_cancels(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    path = layout(
        tmp_path,
        '{ partition = "gpu", nodes = 2, gpus_per_node = 8, '
        'time = "0:10:00", handoff_before = "9m45s" }',
    )
    engine = Engine(path, tmp_path / "engine.out")
    try:
        engine.wait_for("running headless with 4 agents", 90)
        said = engine.said()
        assert "hosts.gpu: submitted Slurm job" in said
        (job,) = [ln.split()[0] for ln in jobs(slurm)]
        assert f"hosts.gpu: Slurm job {job} runs on gpu01, gpu02 until " in said
        assert slurm.job(job)["JobName"] == f"swarm-{FLEET}-gpu"
        listed = swarm("ls", "--fleet", FLEET, "--json")
        assert listed.returncode == 0, listed.stderr
        hosts = {a["name"]: a["host"] for a in json.loads(listed.stdout)}
        assert hosts == {
            "Gauss": "gpu01",
            "Noether": "gpu01",
            "Euler": "gpu02",
            "Riemann": "gpu02",
        }, listed.stdout
        # 15 s after the job started (9m45s before its 10-minute limit): handoff notes
        wait_until(
            lambda: (
                len({r["agent"] for r in received(tmp_path) if "handoff note" in r["text"]}) == 4
            ),
            60,
            "each agent asked for a handoff note",
            lambda: repr(received(tmp_path)),
        )
        asked = [r["text"] for r in received(tmp_path) if "handoff note" in r["text"]]
        assert all(t.startswith(f"Slurm job {job} ends in 10m;") for t in asked), asked
        assert len(asked) == 4  # once each
        engine.stop()
        done = swarm("down", str(path), timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"hosts.gpu: Slurm job {job} cancelled" in done.stdout
        slurm.wait_state(job, "CANCELLED")
    finally:
        engine.stop()


def test_a_job_the_user_holds_is_used_and_left_running(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    job = slurm.submit(
        "--nodes=2", "--gpus-per-node=8", "--output=/dev/null", "--wrap", "sleep 600"
    )
    slurm.wait_state(job, "RUNNING")
    path = layout(tmp_path, f"{{ job = {job} }}", per_host=1)
    checked = swarm("doctor", str(path))
    assert f"Slurm job {job} runs on gpu[01-02]" in checked.stdout, checked.stdout
    engine = Engine(path, tmp_path / "engine.out")
    try:
        engine.wait_for("running headless with 2 agents", 90)
        assert "hosts.gpu: submitted" not in engine.said()
        listed = swarm("ls", "--fleet", FLEET, "--json")
        assert {a["name"]: a["host"] for a in json.loads(listed.stdout)} == {
            "Gauss": "gpu01",
            "Noether": "gpu02",
        }, listed.stdout
        engine.stop()
        done = swarm("down", str(path), timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"hosts.gpu: Slurm job {job} is yours: left running" in done.stdout
        assert slurm.job(job)["JobState"] == "RUNNING"
    finally:
        engine.stop()


def test_a_refused_allocation_is_one_line_and_exit_2(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    path = layout(tmp_path, '{ partition = "nope", nodes = 2 }')
    done = swarm("up", str(path), "--headless", timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "Slurm" in ln]
    assert lines == [
        "swarm: hosts.gpu: Slurm refused the allocation: sbatch: error: Batch "
        "job submission failed: Invalid partition name specified"
    ], done.stderr
    assert jobs(slurm) == []
    checked = swarm("doctor", str(path))  # doctor finds it before any `up`
    assert checked.returncode == 1
    assert "partition nope does not exist here (`sinfo -s` lists them)" in checked.stdout


def test_an_interrupted_start_cancels_the_pending_job(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    slurm.drain("gpu02", "maintenance")
    path = layout(tmp_path, "{ nodes = 2 }")
    engine = Engine(path, tmp_path / "engine.out")
    try:
        engine.wait_for("pending (", 60)  # its reason, and how long it has waited
        (job,) = [ln.split()[0] for ln in jobs(slurm)]
        os.killpg(engine.proc.pid, signal.SIGINT)  # Ctrl-C
        assert engine.proc.wait(30) != 0
        slurm.wait_state(job, "CANCELLED")
        assert "the job swarm submitted is cancelled" in engine.said()
        assert f"Slurm job {job}, submitted by this start, cancelled" in engine.said()
        assert not (home / f"{FLEET}.slurm.json").exists()
    finally:
        engine.stop()


def test_srun_reaches_the_nodes_without_ssh(
    slurm: SlurmCluster, home: Path, tmp_path: Path, monkeypatch
) -> None:
    no_ssh = tmp_path / "no-ssh-config"
    no_ssh.write_text("Host *\n  HostName 192.0.2.1\n  ConnectTimeout 1\n")  # nowhere
    monkeypatch.setenv("SWARM_SSH_CONFIG", str(no_ssh))
    path = layout(tmp_path, "{ nodes = 2, gpus_per_node = 8 }", per_host=1)
    path.write_text(path.read_text().replace("[hosts.gpu]\n", '[hosts.gpu]\ntransport = "srun"\n'))
    engine = Engine(path, tmp_path / "engine.out")
    try:
        engine.wait_for("running headless with 2 agents", 90)
        (job,) = [ln.split()[0] for ln in jobs(slurm)]
        sent = swarm("send", "Noether", "hello from the login node", "--fleet", FLEET)
        assert sent.returncode == 0, sent.stderr
        wait_until(
            lambda: (
                [r["text"] for r in received(tmp_path) if r["agent"] == "Noether"]
                == ["hello from the login node"]
            ),
            30,
            "the message, over srun",
            lambda: repr(received(tmp_path)),
        )
        steps = slurm.run("squeue", "-h", "-s", "-j", job, "-o", "%i %j %N").stdout
        assert any(" tmux " in f" {ln} " and ln.endswith("gpu02") for ln in steps.splitlines()), (
            steps
        )  # gpu02's tmux server: a step of the job
        engine.stop()
        done = swarm("down", str(path), timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        slurm.wait_state(job, "CANCELLED")
    finally:
        engine.stop()


@asynccontextmanager
async def probed_fleet(path: Path, home: Path) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The layout's allocation as an in-process fleet whose job is probed every 0.5 s, once
    every agent is idle: (fleet, store, notices); stopped after."""
    from swarm_tui.agents.base import AgentState
    from swarm_tui.config.layout import load_layout
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.store import Store
    from swarm_tui.hosts.slurm import allocate, probe
    from swarm_tui.testing.notices import Notices
    from swarm_tui.testing.waiting import async_wait_until

    loaded = await allocate(load_layout(path), lambda line: None)
    store = Store(home / "ssh.sqlite3")
    notices = Notices()
    fleet = Fleet(loaded, store, notices, lease_probe=probe)
    fleet.lease_probe_every = 0.5
    await fleet.start()
    try:
        await async_wait_until(
            lambda: all(a.state is AgentState.IDLE for a in fleet.agents.values()),
            60,
            "every agent idle",
        )
        yield fleet, store, notices
    finally:
        await fleet.stop()
        store.close()


async def test_a_job_that_ends_leaves_its_agents_lost_and_their_messages_queued(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    """Preempted, cancelled or out of time: its nodes' agents are lost (never started
    again there), what is queued for them stays queued; nothing else is disturbed."""
    from swarm_tui.agents.base import AgentState
    from swarm_tui.testing.waiting import async_wait_until

    path = layout(tmp_path, "{ nodes = 2 }", per_host=1)
    path.write_text(path.read_text() + f'[[agents]]\nname = "Planner"\nargs = {FAST}\n')
    async with probed_fleet(path, home) as (fleet, store, notices):
        agents = fleet.agents
        (job,) = [ln.split()[0] for ln in jobs(slurm)]
        assert slurm.run("scancel", job).returncode == 0  # as a preemption ends it
        await async_wait_until(
            lambda: all(fleet.links[n].ended for n in ("gpu01", "gpu02")),
            30,
            "the job's end noticed",
            lambda: repr(notices.lines),
        )
        assert "ended (cancelled)" in fleet.links["gpu01"].detail
        assert any(
            f"Slurm job {job} ended (cancelled): gpu01, gpu02 lost" in n for n in notices.lines
        ), notices.lines
        (queued,) = fleet.send(["Gauss"], "for the next allocation")
        await async_wait_until(
            lambda: agents["Gauss"].state is AgentState.UNREACHABLE, 10, "Gauss lost"
        )
        fleet.send(["Planner"], "the planner goes on")
        await async_wait_until(
            lambda: any(r["text"] == "the planner goes on" for r in received(tmp_path)),
            30,
            "the planner's",
        )
        assert store.message(queued.id).status == "queued"  # kept for the next allocation
        assert fleet.links["gpu01"].connected is False


async def test_a_suspended_job_is_said_and_its_return_too(
    slurm: SlurmCluster, home: Path, tmp_path: Path
) -> None:
    """`scontrol suspend` (an admin, or a preemption in SUSPEND mode) stops a job without
    ending it: said once, its nodes are not given up, and when it resumes that is said too."""
    from swarm_tui.agents.base import AgentState
    from swarm_tui.testing.waiting import async_wait_until

    path = layout(tmp_path, "{ nodes = 2 }", per_host=1)
    async with probed_fleet(path, home) as (fleet, _, notices):
        (job,) = [ln.split()[0] for ln in jobs(slurm)]
        suspend = slurm.run("scontrol", "suspend", job)
        assert suspend.returncode == 0, suspend.stderr
        said = f"Slurm job {job} is suspended until it resumes (gpu01, gpu02)"
        await async_wait_until(
            lambda: said in notices.lines, 30, "the suspension said", lambda: repr(notices.lines)
        )
        assert not any(link.ended for link in fleet.links.values())
        assert slurm.run("scontrol", "resume", job).returncode == 0
        await async_wait_until(
            lambda: f"Slurm job {job} runs again (gpu01, gpu02)" in notices.lines,
            30,
            "the return said",
            lambda: repr(notices.lines),
        )
        assert notices.lines.count(said) == 1
        await async_wait_until(
            lambda: all(a.state is AgentState.IDLE for a in fleet.agents.values()),
            60,
            "agents idle after the job resumed",
        )
