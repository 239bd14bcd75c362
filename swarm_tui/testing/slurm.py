"""A real Slurm cluster for tests, on the real-sshd nodes of `netns.NetnsCluster`.

One `munged` (its own key and socket), one `slurmctld` in the root network namespace and one
`slurmd` inside each node's namespace, at that node's address. The Slurm node names are the
NetnsCluster's node names, which are also its SSH aliases: a node from `scontrol show
hostnames` is reached over SSH as it is. Each node offers `gpus_per_node` fake GPUs
(`Gres=gpu:N`, device files that are links to /dev/null), so `--gpus-per-node=N` can be
asked for, and `cpus_per_node` CPUs whatever this machine has.

The controller listens on an address of its own (on a link in the root namespace, reached
from each node through that node's link), so cutting one node's link (`NetnsNode.cut`)
leaves the others in touch with it. Client commands (sbatch, squeue,
scontrol, srun, scancel, sinfo) find the cluster through `SLURM_CONF` (`SlurmCluster.env`,
which also sends batch output without --output to the cluster's directory).

Timing: nodes are idle within ~0.5 s of the start; the first batch job starts ~3 s after
slurmctld did (it reads its scheduler settings at its first pass), later ones within ~1 s.

Needs root, Debian's slurm-wlm (slurmctld, slurmd, slurm-client) and munge, plus what
`netns` needs; `available()` says why not.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO

from swarm_tui.testing import netns, procs
from swarm_tui.testing.waiting import wait_until

SLURMCTLD = "/usr/sbin/slurmctld"
SLURMD = "/usr/sbin/slurmd"
SLURMSTEPD = "/usr/sbin/slurmstepd"
MUNGED = "/usr/sbin/munged"
CLIENTS = ("sbatch", "squeue", "scontrol", "srun", "scancel", "sinfo", "munge", "nsenter")
PACKAGES = "slurm-wlm munge"  # Debian: slurmctld, slurmd, slurm-client; munge

START_TIMEOUT = 20.0  # seconds for a daemon to come up (they take well under 1 s)


def available() -> str:
    """'' when a Slurm cluster can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, slurmd as root)"
    missing = [p for p in (SLURMCTLD, SLURMD, SLURMSTEPD, MUNGED) if not Path(p).exists()]
    missing += [c for c in CLIENTS if shutil.which(c) is None]
    if missing:
        return (
            f"{', '.join(missing)} missing: install Debian's {PACKAGES} "
            f"(apt-get install {PACKAGES})"
        )
    return netns.available()


def _run(*argv: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return int(s.getsockname()[1])


def _proc_tree() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command name), for every process."""
    return {pid: (int(fields[1]), comm) for pid, (comm, fields) in procs.stats().items()}


def _descendants(roots: set[int], tree: Mapping[int, tuple[int, str]]) -> set[int]:
    found = set(roots)
    while True:
        more = {pid for pid, (ppid, _) in tree.items() if ppid in found} - found
        if not more:
            return found
        found |= more


def _stop(proc: subprocess.Popen[bytes] | None, grace: float) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fields(text: str) -> dict[str, str]:
    """`scontrol show ... -o` output as Key: Value (the first of each key)."""
    out: dict[str, str] = {}
    for word in text.split():
        key, eq, value = word.partition("=")
        if eq and key not in out:
            out[key] = value
    return out


class SlurmCluster:
    """A running Slurm cluster whose compute nodes are `nodes`' nodes `names` (added to
    `nodes` when missing). Partitions: `gpu` (all nodes, the default, MaxTime 24 h) and
    `debug` (the first node, MaxTime 30 min). Use as a context manager, or call `close()`.
    Logs and slurm.conf are in `tmp`."""

    def __init__(
        self,
        tmp: Path,
        nodes: netns.NetnsCluster,
        names: list[str],
        gpus_per_node: int = 8,
        cpus_per_node: int = 16,
        cluster_name: str = "swarmtest",
    ) -> None:
        if not names:
            raise ValueError("a Slurm cluster needs at least one node")
        self.dir = tmp
        self.dir.mkdir(parents=True, exist_ok=True)
        self.nodes = nodes
        self.names = list(names)
        self.gpus_per_node = gpus_per_node
        self.cpus_per_node = cpus_per_node
        self.cluster_name = cluster_name
        self.tag = secrets.token_hex(2)
        # unix sockets (munge's; slurmstepd's in the spool) must fit in 107 bytes: a short dir
        self.run_dir = Path(tempfile.mkdtemp(prefix="swsl-", dir="/tmp"))
        self.munge_socket = self.run_dir / "munge.sock"
        self.conf = self.dir / "slurm.conf"
        # SLURM_CONF is what clients need; SBATCH_OUTPUT keeps a job's slurm-N.out (when
        # sbatch is not given --output) out of the directory the tests run in
        self.env: dict[str, str] = {
            "SLURM_CONF": str(self.conf),
            "SBATCH_OUTPUT": str(self.dir / "slurm-%j.out"),
        }
        self.ctl_link = f"swsl{self.tag}"
        self.ctl_addr = ""
        self.ctl_port = 0
        self.munged: subprocess.Popen[bytes] | None = None
        self.slurmctld: subprocess.Popen[bytes] | None = None
        self.slurmd: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: list[IO[bytes]] = []
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # -- start ------------------------------------------------------------------------------

    def _start(self) -> None:
        for name in self.names:
            if name not in self.nodes.nodes:
                self.nodes.add(name)
        self._controller_address()
        self._start_munge()
        self._write_conf()
        self._start_slurmctld()
        for name in self.names:
            self.start_node(name)
        self.wait_idle()

    def _controller_address(self) -> None:
        """An address for slurmctld on a link of its own, and a route to it from each
        node (srun reaches each slurmd, and is called back, over that node's link)."""
        taken = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
        while True:
            addr = f"10.199.{secrets.randbelow(256)}.{1 + secrets.randbelow(254)}"
            if f" {addr}/" not in taken:
                break
        # a veth pair, both ends here (no dummy links in every kernel): up, with carrier
        _run(
            "ip", "link", "add", self.ctl_link, "type", "veth", "peer", "name", f"{self.ctl_link}p"
        )
        self.ctl_addr = addr
        _run("ip", "addr", "add", f"{addr}/32", "dev", self.ctl_link)
        _run("ip", "link", "set", f"{self.ctl_link}p", "up")
        _run("ip", "link", "set", self.ctl_link, "up")
        for name in self.names:
            node = self.nodes.nodes[name]
            gateway = node.addr.rsplit(".", 1)[0] + ".1"  # the host side of its link
            # that one address only: a default route would send the node's DNS queries
            # to a host that drops them (slow timeouts, where "unreachable" is immediate)
            _run(
                "ip",
                "netns",
                "exec",
                node.ns,
                "ip",
                "route",
                "replace",
                f"{addr}/32",
                "via",
                gateway,
            )
        self.ctl_port = _free_port(addr)

    def _spawn(self, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        f = open(self.dir / log, "ab")  # noqa: SIM115 - closed in close()
        self._logs.append(f)
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=f,
            env={**os.environ, **self.env},
            start_new_session=True,
        )

    def _alive(self, proc: subprocess.Popen[bytes] | None, what: str, *logs: str) -> None:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(
                f"{what} exited ({proc.returncode}):" + "".join(self.tail(log) for log in logs)
            )

    def _start_munge(self) -> None:
        key = self.run_dir / "munge.key"
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))
        # --force: munged refuses a socket in a directory others cannot enter (0700 here)
        self.munged = self._spawn(
            [
                MUNGED,
                "--foreground",
                "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={key}",
                f"--pid-file={self.run_dir / 'munged.pid'}",
                f"--seed-file={self.run_dir / 'munged.seed'}",
                f"--log-file={self.dir / 'munged.log'}",
            ],
            "munged.out",
        )

        def ready() -> bool:
            self._alive(self.munged, "munged", "munged.out", "munged.log")
            return (
                subprocess.run(
                    ["munge", "-n", "-S", str(self.munge_socket)], capture_output=True
                ).returncode
                == 0
            )

        wait_until(ready, START_TIMEOUT, "munged to answer")

    def _write_conf(self) -> None:
        state = self.dir / "state"
        state.mkdir(exist_ok=True)
        gres = f" Gres=gpu:{self.gpus_per_node}" if self.gpus_per_node else ""
        host = socket.gethostname().split(".")[0]  # slurmctld checks it is this machine
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={host}({self.ctl_addr})",
            f"SlurmctldPort={self.ctl_port}",
            "SlurmdPort=6818",  # each slurmd in its own namespace: no clash
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={state}",
            f"SlurmdSpoolDir={self.run_dir}/%n",
            f"SlurmctldPidFile={self.run_dir}/slurmctld.pid",
            f"SlurmdPidFile={self.run_dir}/slurmd-%n.pid",
            f"SlurmctldLogFile={self.dir}/slurmctld.log",
            f"SlurmdLogFile={self.dir}/slurmd-%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",  # the configured CPUs, not this machine's
            *(["GresTypes=gpu"] if self.gpus_per_node else []),
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/builtin",
            "SchedulerParameters=batch_sched_delay=0",  # the default holds batch jobs 3 s
            "EnforcePartLimits=ALL",  # sbatch refuses what its partition does not allow
            "ReturnToService=2",
            "MailProg=/bin/true",
            "MessageTimeout=5",
            "TCPTimeout=2",
            "SlurmctldTimeout=10",
            "SlurmdTimeout=10",
            "BatchStartTimeout=10",
            "KillWait=1",
            "InactiveLimit=0",
            "MinJobAge=300",
        ]
        for name in self.names:
            lines.append(
                f"NodeName={name} NodeAddr={self.nodes.nodes[name].addr} "
                f"CPUs={self.cpus_per_node} RealMemory=64000{gres} State=UNKNOWN"
            )
        lines += [
            f"PartitionName=gpu Nodes={','.join(self.names)} Default=YES MaxTime=24:00:00 State=UP",
            f"PartitionName=debug Nodes={self.names[0]} MaxTime=00:30:00 State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")
        gres_conf = ""
        if self.gpus_per_node:
            # gpu/generic drops a GPU without a device file, and the file must be a
            # character device: links to /dev/null stand in for /dev/nvidia*
            gpus = self.run_dir / "gpu"
            gpus.mkdir()
            for i in range(self.gpus_per_node):
                (gpus / f"nvidia{i}").symlink_to("/dev/null")
            n = self.gpus_per_node
            files = f"{gpus}/nvidia" + (f"[0-{n - 1}]" if n > 1 else "0")
            gres_conf = "".join(f"NodeName={n} Name=gpu File={files}\n" for n in self.names)
        (self.dir / "gres.conf").write_text(gres_conf)
        # slurmd loads a cgroup plugin whatever the other plugins, and its autodetection
        # fails where no cgroup filesystem is mounted; cgroup/v1 is only loaded, not used:
        # nothing here uses cgroups (proctrack/linuxproc, task/none)
        (self.dir / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")

    def _start_slurmctld(self) -> None:
        self.slurmctld = self._spawn([SLURMCTLD, "-D", "-i", "-f", str(self.conf)], "slurmctld.out")

        def up() -> bool:
            self._alive(self.slurmctld, "slurmctld", "slurmctld.out", "slurmctld.log")
            return "UP" in self.run("scontrol", "ping", timeout=10).stdout

        wait_until(
            up,
            START_TIMEOUT,
            "slurmctld to answer `scontrol ping`",
            detail=lambda: self.tail("slurmctld.log"),
        )

    def start_node(self, name: str) -> None:
        """Start (or restart) the node's slurmd inside its network namespace; it registers
        on its own (see `wait_idle`)."""
        _stop(self.slurmd.pop(name, None), 3.0)
        node = self.nodes.nodes[name]
        (self.run_dir / name).mkdir(exist_ok=True)
        # nsenter --net: only the network is the node's (`ip netns exec` remounts /sys too)
        self.slurmd[name] = self._spawn(
            [
                "nsenter",
                f"--net=/run/netns/{node.ns}",
                SLURMD,
                "-D",
                "-N",
                name,
                "-f",
                str(self.conf),
            ],
            f"slurmd-{name}.out",
        )

    # -- use --------------------------------------------------------------------------------

    def run(self, *argv: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """A command (sbatch, squeue, srun, ...) against this cluster; output as text."""
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **self.env},
        )

    def submit(self, *args: str) -> int:
        """`sbatch --parsable ARGS`: the job id (raises with sbatch's words if refused)."""
        r = self.run("sbatch", "--parsable", *args)
        first = r.stdout.strip().split(";")[0]
        if r.returncode != 0 or not first.isdigit():
            raise RuntimeError(f"sbatch {' '.join(args)}: {r.stderr.strip() or r.stdout}")
        return int(first)

    def states(self) -> dict[str, str]:
        """Each node's state as `sinfo` says it: idle, mix, alloc, down*, drain, idle*..."""
        out: dict[str, str] = {}
        for line in self.run("sinfo", "-h", "-N", "-o", "%N %t").stdout.splitlines():
            name, _, state = line.partition(" ")
            out[name] = state.strip()
        return out

    def wait_states(
        self, want: Callable[[dict[str, str]], bool], what: str, timeout: float = START_TIMEOUT
    ) -> dict[str, str]:
        """Until `want(states())`; failing early if a slurmd died."""

        def check() -> dict[str, str]:
            for name, proc in self.slurmd.items():
                self._alive(proc, f"slurmd {name}", f"slurmd-{name}.out", f"slurmd-{name}.log")
            states = self.states()
            return states if want(states) else {}

        return wait_until(
            check,
            timeout,
            what,
            detail=lambda: f"sinfo: {self.states()}{self.tail('slurmctld.log')}",
        )

    def wait_idle(self, timeout: float = START_TIMEOUT) -> None:
        """Until every node is idle (registered, answering, nothing running) in `sinfo`."""
        self.wait_states(
            lambda s: all(s.get(n) == "idle" for n in self.names),
            f"nodes {', '.join(self.names)} idle in sinfo",
            timeout,
        )

    def job(self, job: int | str) -> dict[str, str]:
        """`scontrol show job -o JOB` as Key: Value ({} once Slurm forgot it)."""
        return fields(self.run("scontrol", "show", "job", "-o", str(job)).stdout)

    def wait_state(self, job: int | str, *states: str, timeout: float = 20.0) -> dict[str, str]:
        """Until the job is in one of `states` (RUNNING, CANCELLED, ...); its fields."""

        def there() -> dict[str, str]:
            info = self.job(job)
            return info if info.get("JobState") in states else {}

        return wait_until(
            there,
            timeout,
            f"job {job} {'/'.join(states)}",
            detail=lambda: f"{self.job(job)}{self.tail('slurmctld.log')}",
        )

    def drain(self, name: str, reason: str = "drained by test") -> None:
        """Drain the node: what runs there keeps running, nothing new starts there."""
        r = self.run("scontrol", "update", f"NodeName={name}", "State=DRAIN", f"Reason={reason}")
        if r.returncode != 0:
            raise RuntimeError(f"drain {name}: {r.stderr.strip()}")

    def resume(self, name: str) -> None:
        """Undo `drain` (or a DOWN); returns once the node answers again."""
        r = self.run("scontrol", "update", f"NodeName={name}", "State=RESUME")
        if r.returncode != 0:
            raise RuntimeError(f"resume {name}: {r.stderr.strip()}")
        self.wait_states(
            lambda s: (
                not any(c in s.get(name, "*") for c in "*~#!%@")
                and "drain" not in s.get(name, "")
                and "down" not in s.get(name, "")
            ),
            f"{name} back in service",
        )

    def kill_node(self, name: str, tell: bool = True) -> None:
        """The node's slurmd and every job step on it killed, as if it crashed. With
        `tell`, the controller is told at once (State=DOWN) instead of noticing after
        SlurmdTimeout (10 s). Its batch jobs are requeued (Slurm's default; sbatch
        --no-requeue to have them end NODE_FAIL). `start_node` brings it back."""
        self._kill_slurm_on(name)
        if tell:
            r = self.run(
                "scontrol", "update", f"NodeName={name}", "State=DOWN", "Reason=killed by test"
            )
            if r.returncode != 0:
                raise RuntimeError(f"down {name}: {r.stderr.strip()}")

    def tail(self, log: str, lines: int = 20) -> str:
        """The last lines of one of the logs in `dir` (slurmctld.log, slurmd-NODE.log...)."""
        try:
            text = (self.dir / log).read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"\n--- {log}\n" + "\n".join(text)

    # -- stop -------------------------------------------------------------------------------

    def _kill_slurm_on(self, name: str) -> None:
        """SIGKILL the node's slurmd, its slurmstepds and the job processes under them (the
        stepds outlive slurmd); the node's sshd and what it started are left alone."""
        proc = self.slurmd.pop(name, None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        node = self.nodes.nodes.get(name)
        if node is None:
            return
        r = subprocess.run(["ip", "netns", "pids", node.ns], capture_output=True, text=True)
        inside = {int(p) for p in r.stdout.split() if p.isdigit()}
        tree = _proc_tree()
        roots = {p for p in inside if tree.get(p, (0, ""))[1] in ("slurmd", "slurmstepd")}
        for pid in _descendants(roots, tree) & inside:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop every daemon and job step, remove its link and the runtime directory.
        Safe to call twice, and after a failed start."""
        errors: list[Exception] = []

        def attempt(step: Callable[..., object], *args: object) -> None:
            try:
                step(*args)
            except Exception as exc:  # noqa: BLE001 - clean up the rest, then say
                errors.append(exc)

        attempt(_stop, self.slurmctld, 0.5)  # first: it would keep calling the nodes
        for name in self.names:
            attempt(self._kill_slurm_on, name)
        for proc in self.slurmd.values():  # a node no longer in `nodes`
            attempt(_stop, proc, 1.0)
        self.slurmd.clear()
        attempt(_stop, self.munged, 3.0)
        if self.ctl_addr:
            attempt(_run, "ip", "link", "del", self.ctl_link)
            self.ctl_addr = ""
        attempt(shutil.rmtree, self.run_dir, True)
        self.slurmctld = self.munged = None
        for f in self._logs:
            f.close()
        self._logs.clear()
        if errors:
            raise errors[0]

    def __enter__(self) -> SlurmCluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


__all__ = ["SlurmCluster", "available", "fields"]
