"""A real full disk, and a real read-only one, under swarm's state directory (SWARM_HOME).

SWARM_HOME is a small tmpfs (`mount -t tmpfs -o size=2m`), filled to the last byte while a
headless fleet runs:

- a send is refused: exit non-zero, one line saying the journal cannot be written and that
  nothing was recorded; the journal holds no trace of it;
- the listener (the headless log) gets a notice;
- the engine keeps watching its agents (`swarm ls` answers, states still change) and a queue
  that hit the full journal holds its message and says so, typing nothing meanwhile;
- once space is freed, the held message and new sends are delivered by themselves, each
  exactly once and in order.

A read-only state directory: `swarm up` and `swarm send` each say so in one line (no
traceback) and exit non-zero.

Needs root (mount); skips with the reason where mounting a tmpfs is not permitted.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.testing import Headless, Sandbox, mock_agent, wait_until
from tests.faults.ledger import account
from tests.faults.wire import raw_request

pytestmark = pytest.mark.integration

FLEET = "disk"
FILLER = "filler.bin"


def mount(where: Path, *options: str) -> None:
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)],
        capture_output=True,
        text=True,
        timeout=10,
    )
    if proc.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs for the state directory (needs root): "
            f"{proc.stderr.strip() or proc.returncode}"
        )


def unmount(where: Path) -> None:
    if subprocess.run(["umount", str(where)], capture_output=True, timeout=10).returncode:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=10)


@pytest.fixture
def tmpfs_box(tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox whose SWARM_HOME (journal, socket, lock, tmux sockets) is a 2 MiB tmpfs;
    layouts and the mock agents' logs stay on the ordinary disk."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    box = Sandbox.create(tmp_path)
    try:
        mount(box.home, "size=2m", "mode=0700")
    except BaseException:
        shutil.rmtree(box.home, ignore_errors=True)
        raise
    try:
        yield box
    finally:
        try:
            box.cleanup()  # tmux servers first: their sockets live on the tmpfs
        finally:
            unmount(box.home)
            shutil.rmtree(box.home, ignore_errors=True)


def ask(box: Sandbox, payload: dict[str, object], timeout: float = 10.0) -> dict:
    """One raw JSON request on the fleet's socket."""
    reply, why = raw_request(box.socket_path(FLEET), dict(payload), timeout)
    assert reply is not None, why
    return reply


def states(box: Sandbox) -> dict[str, str]:
    return {a["name"]: a["state"] for a in ask(box, {"op": "ls"})["agents"]}


def fill(directory: Path) -> int:
    """Write a file until the file system has not one byte left; returns its size."""
    path = directory / FILLER
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    size, chunk = 0, 1 << 16
    try:
        while chunk:
            try:
                size += os.write(fd, b"\0" * chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk //= 2
    finally:
        os.close(fd)
    return size


def journal_texts(box: Sandbox) -> list[tuple[str, str, str]]:
    return [(m["recipient"], m["text"], m["status"]) for m in box.journal(FLEET)]


def test_a_full_disk_refuses_in_one_line_holds_and_then_delivers_once(
    tmpfs_box: Sandbox, ledger
) -> None:
    box = tmpfs_box
    layout = box.layout(
        FLEET, mock_agent("Ada", "--work", "2", "--permission-rate", "1"), mock_agent("Bob")
    )
    engine: Headless = box.start_headless(layout)
    engine.wait_ready(30)
    wait_until(lambda: set(states(box).values()) == {"idle"}, 30, "both agents idle", engine.output)
    sent: dict[str, list[str]] = {"Ada": [], "Bob": []}

    def send(agent: str, text: str) -> str:
        sent[agent].append(text)
        proc = box.swarm("send", agent, text, timeout=20)
        return f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"

    assert send("Bob", "bob before").startswith("exit 0")
    assert send("Ada", "first").startswith("exit 0")
    wait_until(
        lambda: states(box)["Ada"] == "needs-permission",
        20,
        "Ada to ask for permission",
        engine.output,
    )
    assert send("Ada", "second").startswith("exit 0")  # held behind the permission prompt
    wait_until(lambda: box.received("Bob") == ["bob before"], 20, "Bob's first message")

    filled = fill(box.home)
    assert filled > 0
    refused = box.swarm("send", "Ada", "third", timeout=20)
    sent["Ada"].append("third")
    lines = refused.stderr.strip().splitlines()
    one_line = (
        refused.returncode != 0
        and len(lines) == 1
        and "cannot be written" in lines[0]
        and "nothing was recorded" in lines[0]
        and "Traceback" not in refused.stderr
    )
    ledger.probe("full disk: a send is refused in one line", one_line)
    assert one_line, f"exit {refused.returncode}, stderr {refused.stderr!r}"
    noticed = wait_until(
        lambda: [ln for ln in engine.stdout().splitlines() if "journal cannot be written" in ln],
        10,
        "a notice to the listener",
        engine.output,
    )
    assert noticed

    # the engine still watches: the human answers Ada's prompt and her state moves on;
    # "second" is now due, but its queue cannot journal it as `sending`, so it must hold it
    box.tmux(FLEET).send_keys("Ada", "y")
    held = wait_until(
        lambda: [ln for ln in engine.stdout().splitlines() if "Ada: message queue failed" in ln],
        30,
        "Ada's queue to say it holds its message",
        engine.output,
    )
    assert held
    assert "second" not in box.received("Ada")
    assert states(box)["Bob"] == "idle"  # `swarm ls` answers, Bob still watched
    assert ("Ada", "third") not in [(r, t) for r, t, _ in journal_texts(box)]

    (box.home / FILLER).unlink()  # space is back

    def answer_permissions() -> None:
        if states(box)["Ada"] == "needs-permission":
            box.tmux(FLEET).send_keys("Ada", "y")

    def delivered(agent: str, text: str) -> bool:
        answer_permissions()
        return any(r == agent and t == text and s == "delivered" for r, t, s in journal_texts(box))

    wait_until(
        lambda: delivered("Ada", "second"),
        45,
        "the held message to deliver itself",
        engine.output,
        interval=0.3,
    )
    assert send("Bob", "bob after").startswith("exit 0")
    assert send("Ada", "fourth").startswith("exit 0")
    wait_until(
        lambda: delivered("Ada", "fourth") and delivered("Bob", "bob after"),
        45,
        "new sends to be delivered",
        engine.output,
        interval=0.3,
    )

    journaled = {t for _, t, _ in journal_texts(box)}
    received = {a: box.received(a) for a in sent}
    run = ledger.add(account(sent, received, journaled=journaled))
    assert "third" not in journaled and "third" not in received["Ada"]
    assert not run.problems, run.problems
    assert (run.sent, run.delivered) == (5, 5)
    statuses = [s for _, _, s in journal_texts(box)]
    assert statuses == ["delivered"] * 5, journal_texts(box)


def test_a_read_only_state_directory_is_one_clear_line(tmpfs_box: Sandbox, ledger) -> None:
    """The state directory of a fleet that ran (its journal, its agents' tmux server still
    up) turns read-only, as a file system does after errors."""
    box = tmpfs_box
    layout = box.layout(FLEET, mock_agent("Ada"))
    engine = box.start_headless(layout)
    engine.wait_ready(30)
    assert box.swarm("send", "Ada", "before", "--wait", "20").returncode == 0
    engine.interrupt()
    assert engine.wait(15) == 0, engine.output()
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(box.home)], capture_output=True, text=True, timeout=10
    )
    assert remount.returncode == 0, remount.stderr
    try:
        results = {
            "up": box.swarm("up", str(layout), "--headless", timeout=20),
            "send": box.swarm("send", "Ada", "hello", timeout=20),
            "ls": box.swarm("ls", timeout=20),
        }
    finally:
        subprocess.run(
            ["mount", "-o", "remount,rw", str(box.home)], capture_output=True, timeout=10
        )
    problems = []
    for verb, proc in results.items():
        lines = proc.stderr.strip().splitlines()
        if (
            proc.returncode == 0
            or len(lines) != 1
            or "Traceback" in proc.stderr
            or not lines[0].startswith("swarm: ")
        ):
            problems.append(
                f"swarm {verb}: exit {proc.returncode}, stderr {proc.stderr.strip()[-600:]!r}"
            )
    ledger.probe("read-only state directory: one clear line", not problems)
    assert not problems, "\n".join(problems)
    assert str(box.home) in results["up"].stderr  # it names the directory
    assert box.received("Ada") == ["before"]  # nothing typed by the refused send
