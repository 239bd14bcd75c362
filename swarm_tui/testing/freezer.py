"""Keep a pane's processes from running for a while, as a starved machine does.

Not a signal: tmux continues a pane's process that SIGSTOP stopped at once, and the kernel
ignores SIGTSTP/SIGTTIN for a session leader. The cgroup (v1) freezer stops every process
of the pane's session without either tmux or the process seeing a thing. Needs root; where
the freezer cannot be used the test skips, except under CI, where it fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from swarm_tui.testing import procs
from swarm_tui.testing.waiting import wait_until

FREEZER = Path("/sys/fs/cgroup/freezer")


def session_pids(leader: int) -> list[int]:
    """Every process in the session `leader` leads (a pane's CLI and all it started)."""
    return [pid for pid, (_, fields) in procs.stats().items() if int(fields[3]) == leader]


@contextmanager
def frozen(leader: int, session: bool = True) -> Iterator[list[int]]:
    """Freeze the session of pane process `leader` (or, not `session`, that one process)
    until the block ends; yields the pids frozen."""
    group = FREEZER / f"swarm-test-{os.getpid()}-{leader}"
    try:
        group.mkdir()
    except OSError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the cgroup freezer is not available here ({exc}); CI runs this as root")
    pids = session_pids(leader) if session else [leader]
    try:
        for pid in pids:
            (group / "cgroup.procs").write_text(str(pid))
        (group / "freezer.state").write_text("FROZEN")
        wait_until(
            lambda: (group / "freezer.state").read_text().strip() == "FROZEN",
            5,
            f"processes {pids} to be frozen",
        )
        yield pids
    finally:
        (group / "freezer.state").write_text("THAWED")
        for member in (group / "cgroup.procs").read_text().split():
            (FREEZER / "cgroup.procs").write_text(member)
        group.rmdir()
