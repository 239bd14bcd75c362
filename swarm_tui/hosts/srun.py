"""A node of a Slurm job reached through Slurm itself: every command is a step of the job
that holds the node (`srun --jobid J --overlap -w NODE`), so no SSH to compute nodes is
needed. The control channel and the relay are long-running steps whose stdin and stdout are
the pipe; one-off commands are short steps (a few at a time: each asks slurmctld)."""

from __future__ import annotations

import asyncio
import subprocess
import time

from swarm_tui.config.hosts import HostSpec
from swarm_tui.errors import HostUnreachable, TmuxError
from swarm_tui.hosts.remote import RemoteHost
from swarm_tui.tmux.client import Reader, Writer

STEPS = 4  # one-off steps at a time per node
SERVER_WAIT = 30.0  # seconds for the tmux server's own step to start


class SrunProc:
    """A long-running job step: its stdout, its stdin, and an end."""

    def __init__(self, proc: asyncio.subprocess.Process):
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout

    @property
    def stdout(self) -> Reader:
        return self._stdout

    def write(self, data: bytes) -> None:
        self._stdin.write(data)

    async def drain(self) -> None:
        await self._stdin.drain()

    async def readline(self) -> bytes:
        try:
            return await self._stdout.readline()
        except (OSError, ValueError):
            return b""

    def close(self) -> None:
        if self._proc.returncode is None:
            self._proc.terminate()


class SrunTransport:
    """Steps of job `job` on `node`."""

    def __init__(self, name: str, job: int, node: str):
        self.name = name
        self.base = [
            "srun",
            f"--jobid={job}",
            "--overlap",
            f"--nodelist={node}",
            "--nodes=1",
            "--ntasks=1",
            "--quiet",
        ]
        self._open = False
        self._pool = asyncio.Semaphore(STEPS)
        self._steps: set[asyncio.subprocess.Process] = set()  # long-running ones

    @property
    def connected(self) -> bool:
        return self._open

    async def open(self) -> None:
        self._open = True
        rc, out = await self.run("true", None, 60)
        if rc != 0:
            self._open = False
            raise HostUnreachable(
                f"{self.name}: srun into its job failed: "
                f"{out.strip().splitlines()[-1] if out.strip() else rc}"
            )

    async def close(self) -> None:
        """End the long-running steps (control channel, relay) and wait for their sruns."""
        self._open = False
        steps, self._steps = self._steps, set()
        for proc in steps:
            if proc.returncode is None:
                proc.terminate()
        for proc in steps:
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()

    async def _exec(self, command: str, stderr: int) -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(
                *self.base,
                "sh",
                "-c",
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        except OSError as exc:
            raise HostUnreachable(f"{self.name}: cannot run srun here: {exc}") from None

    async def run(self, command: str, stdin: str | None, timeout: float) -> tuple[int, str]:
        if not self._open:
            raise HostUnreachable(f"{self.name}: not connected")
        async with self._pool:
            proc = await self._exec(command, asyncio.subprocess.STDOUT)
            try:
                out, _ = await asyncio.wait_for(
                    proc.communicate(stdin.encode() if stdin is not None else b""), timeout
                )
            except TimeoutError:
                proc.kill()
                await proc.wait()
                return 124, f"timed out after {timeout:.0f} s"
        return proc.returncode or 0, out.decode(errors="replace")

    async def spawn(self, command: str) -> SrunProc:
        if not self._open:
            raise HostUnreachable(f"{self.name}: not connected")
        proc = await self._exec(command, asyncio.subprocess.DEVNULL)
        self._steps.add(proc)
        return SrunProc(proc)

    async def open_socket(self, path: str) -> tuple[Reader, Writer] | None:
        return None  # every stream is a job step: tmux's control client runs as one

    def terminal_argv(self, command: str) -> list[str]:
        return [*self.base[:-1], "--pty", "sh", "-c", command]


class SrunHost(RemoteHost):
    """A node of the fleet inside the Slurm job that holds it. Its tmux server runs in a
    job step of its own (Slurm ends a step's processes with the step): `tmux -D` in the
    foreground of a step whose srun is detached from swarm, so the agents outlive the
    engine as they do over SSH, and end with the job."""

    session_in_setup = False  # a server started by a job step would end with the step

    async def ensure_session(self, cwd: str) -> bool:
        if await self.session_exists():
            return True
        rc, _ = await self.run("list-sessions")
        if rc != 0:  # no server: start one in its own step
            assert isinstance(self.transport, SrunTransport)
            subprocess.Popen(
                [*self.transport.base, *self.tmux_argv("-D")],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            deadline = time.monotonic() + SERVER_WAIT
            while (await self.run("list-sessions"))[0] != 0 and not await self.session_exists():
                if time.monotonic() > deadline:
                    raise TmuxError(
                        f"{self.name}: the tmux server's job step did not start "
                        f"within {SERVER_WAIT:.0f} s"
                    )
                await asyncio.sleep(0.2)  # a step starting on the node: look again
        return await super().ensure_session(cwd)

    def __init__(self, name: str, spec: HostSpec, socket_name: str, session: str):
        if not spec.job:
            raise HostUnreachable(
                f'{name}: transport = "srun" needs the node of a Slurm '
                "job (a slurm = {...} entry)"
            )
        super().__init__(name, spec, socket_name, session, SrunTransport(name, spec.job, name))
