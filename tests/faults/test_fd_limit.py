"""The headless engine under a low descriptor limit, flooded with idle connections.

`swarm up --headless` runs with RLIMIT_NOFILE 256:256; helper processes then open more idle
raw connections to its socket than the limit allows (and hold them, never asking anything).
Meanwhile:

- `swarm ls` and `swarm send` are served promptly, every one: the idle connections give
  way (the engine closes the oldest idle one of the process holding the most), and a client
  waits in the kernel's line for the full listen queue instead of giving up;
- a send is delivered exactly once;
- the engine's log and stderr stay small (no megabytes of accept() tracebacks);
- once the flood is gone the fleet works as before.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.testing import Headless, Sandbox, holds, mock_agent, swarm_argv, wait_until
from tests.faults.ledger import account

pytestmark = pytest.mark.integration

FLEET = "fds"
NOFILE = 256
# idle connections each helper process keeps open while it opens new ones: 430 in all, more
# than the engine's whole descriptor limit; eleven stay under the per-process cap, one not
HELPERS = [30] * 11 + [100]
PROMPT = 5.0  # seconds: "promptly"
LOG_BOUND = 200_000  # bytes of engine stdout + stderr over the whole run

HOLDER = r"""
import select, socket, sys
path, window = sys.argv[1], int(sys.argv[2])
held, tries = [], 0
while not select.select([sys.stdin], [], [], 0)[0]:  # until the test closes our stdin
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    tries += 1
    try:
        s.connect(path)
        held.append(s)  # idle: it never asks anything
    except OSError:
        s.close()
    if len(held) > window:
        held.pop(0).close()  # keep `window` open, keep opening new ones: a sustained flood
    if tries == window:
        print("holding", len(held), "of", tries, flush=True)
"""


def low_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def start_limited(box: Sandbox, layout: Path) -> Headless:
    """`swarm up LAYOUT --headless` with RLIMIT_NOFILE 256 (as `prlimit --nofile=256:256`)."""
    out, err = box.files / "engine.out", box.files / "engine.err"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen(
            [*swarm_argv(), "up", str(layout), "--headless"],
            env=box.env,
            stdout=fo,
            stderr=fe,
            stdin=subprocess.DEVNULL,
            cwd=box.files,
            preexec_fn=low_limit,
        )
    box._procs.append(proc)  # killed by the sandbox's cleanup if the test fails
    return Headless(proc, out, err)


@pytest.fixture
def holders(sandbox: Sandbox) -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)


def timed(box: Sandbox, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.monotonic()
    proc = box.swarm(*args, timeout=60)
    return time.monotonic() - start, proc


def test_idle_connections_past_the_fd_limit_block_nothing(
    sandbox: Sandbox, holders, ledger
) -> None:
    layout = sandbox.layout(FLEET, mock_agent("Ada"), mock_agent("Bob"))
    engine = start_limited(sandbox, layout)
    engine.wait_ready(30)
    assert sandbox.swarm("send", "Ada", "before the flood", "--wait", "20").returncode == 0
    sock = str(sandbox.socket_path(FLEET))
    for count in HELPERS:
        holders.append(
            subprocess.Popen(
                [sys.executable, "-c", HOLDER, sock, str(count)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    held = 0
    for h in holders:
        assert h.stdout is not None
        for line in h.stdout:  # blocks until the helper has opened all it could
            if line.startswith("holding"):
                held += int(line.split()[3])  # connections tried (the engine may refuse)
                break
    assert held > NOFILE, f"only {held} connections held: the flood is too small"

    # while the flood holds: prompt answers, success or one clear line
    report = []
    sent: dict[str, list[str]] = {"Ada": ["before the flood"], "Bob": []}
    outcomes: dict[str, bool] = {}
    for i in range(4):
        ls_time, ls = timed(sandbox, "ls")
        report.append((f"ls {i}", ls_time, ls))
        text = f"during the flood {i}"
        send_time, send = timed(sandbox, "send", "Bob", text)
        report.append((f"send {i}", send_time, send))
        sent["Bob"].append(text)
        outcomes[text] = send.returncode == 0
    lines = [
        f"swarm {what}: {t:.1f} s, exit {p.returncode}, {p.stdout.strip()[:80]!r} "
        f"{p.stderr.strip()[-400:]!r}"
        for what, t, p in report
    ]
    prompt = all(t < PROMPT and p.returncode == 0 for _, t, p in report)
    ledger.probe("fd limit: ls and send are served promptly under a flood", prompt)
    problems = [] if prompt else ["not served promptly under the flood:", *lines]

    # the flood ends; the fleet works as before
    for h in holders:
        assert h.stdin is not None
        h.stdin.close()
        h.wait(10)
    after = "after the flood"
    sent["Bob"].append(after)
    ok = wait_until(
        lambda: sandbox.swarm("send", "Bob", after, timeout=20).returncode == 0,
        30,
        "a send to be accepted after the flood",
        engine.output,
        interval=1.0,
    )
    assert ok
    wait_until(
        lambda: after in sandbox.received("Bob"), 30, "the send after the flood", engine.output
    )
    journaled = {m["text"] for m in sandbox.journal(FLEET)}
    refused = [t for t, accepted in outcomes.items() if not accepted]
    # a refused send must not sit in the journal, waiting to be typed after all
    holds(
        lambda: not any(t in sandbox.received("Bob") for t in refused),
        1.0,
        "refused sends to stay untyped",
        engine.output,
    )
    run = ledger.add(account(sent, {a: sandbox.received(a) for a in sent}, journaled=journaled))
    if [t for t in refused if t in journaled]:
        problems.append(
            f"sends reported as failed were journaled (and will be typed): "
            f"{[t for t in refused if t in journaled]}"
        )
    problems += run.problems
    size = engine.out_path.stat().st_size + engine.err_path.stat().st_size
    small = size < LOG_BOUND
    ledger.probe("fd limit: engine log stays small", small)
    if not small:
        problems.append(f"engine wrote {size} bytes of log")
    if engine.proc.poll() is not None:
        problems.append(f"the engine exited ({engine.proc.returncode})")
    assert not problems, (
        "\n".join(problems) + f"\n--- engine stderr ({size} bytes of "
        f"log in all)\n{engine.stderr()[-1500:]}"
    )
