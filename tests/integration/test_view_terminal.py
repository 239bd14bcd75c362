"""The view in a real terminal (a tmux pane), the engine behind it: closing the terminal leaves
the engine delivering and firing reminders; two views see each other's edits; attaching to an
agent's window stalls nothing; a killed engine is said and, started again, re-attached."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from swarm_tui.testing import Sandbox, mock_agent, wait_until
from swarm_tui.testing.sandbox import TmuxServer, swarm_argv

pytestmark = pytest.mark.integration


def terminal(sandbox: Sandbox, name: str) -> TmuxServer:
    """A terminal the user types in: a tmux server of its own, not the fleet's."""
    server = TmuxServer(f"term-{name}-{sandbox.home.name}", sandbox.env)
    sandbox._servers.append(server)
    return server


def run_in(term: TmuxServer, session: str, *args: str) -> None:
    command = " ".join([*swarm_argv(), *args]) + "; sleep 3600"
    subprocess.run(
        [
            "tmux",
            "-L",
            term.socket_name,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "160",
            "-y",
            "45",
            command,
        ],
        env=term.env,
        check=True,
        timeout=10,
    )


def screen(term: TmuxServer, session: str) -> str:
    return term.run("capture-pane", "-p", "-t", session).stdout


def engine(sandbox: Sandbox) -> dict[str, str]:
    out = sandbox.swarm("ps").stdout
    return {"line": out, "pid": out.split("pid ")[1].split(",")[0] if "pid " in out else ""}


def test_the_engine_outlives_its_view_and_views_share_it(sandbox: Sandbox) -> None:
    layout = sandbox.layout(
        "night",
        mock_agent("Ada"),
        mock_agent("Bo"),
        reminders=[{"to": "Bo", "every": "10s", "text": "keep going"}],
    )
    first = terminal(sandbox, "a")
    run_in(first, "u", "up", str(layout))
    try:
        wait_until(
            lambda: "page 1/1 · 2 agents" in screen(first, "u"),
            60,
            "the view in the first terminal",
            lambda: screen(first, "u"),
        )
        assert "1 watcher" in engine(sandbox)["line"]
        pid = engine(sandbox)["pid"]

        first.run("kill-server")  # the terminal goes, with a SIGHUP to everything in it
        wait_until(
            lambda: "0 watchers" in engine(sandbox)["line"],
            15,
            "the view to be gone",
            lambda: engine(sandbox)["line"],
        )
        assert engine(sandbox)["pid"] == pid
        closed = time.time()
        sent = sandbox.swarm("send", "Ada", "while nobody watches", "--wait", "20")
        assert sent.returncode == 0 and "delivered" in sent.stdout, sent.stdout + sent.stderr
        wait_until(
            lambda: any(
                r["sender"].startswith("reminder:") and r["created"] > closed
                for r in sandbox.journal("night")
            ),
            25,
            "a reminder fired by the engine with nobody watching",
        )

        # two views at once; what one does, the other shows
        second = terminal(sandbox, "b")
        run_in(second, "one", "ui", "night")
        run_in(second, "two", "ui", "night")
        for session in ("one", "two"):
            wait_until(
                lambda s=session: "page 1/1 · 2 agents" in screen(second, s),
                30,
                f"view {session}",
                lambda s=session: screen(second, s),
            )
        assert "2 watchers" in engine(sandbox)["line"]
        second.run("send-keys", "-t", "one", "f")
        wait_until(
            lambda: "Focus" in screen(second, "one") or "focus" in screen(second, "one"),
            10,
            "the focus editor",
            lambda: screen(second, "one"),
        )
        second.run("send-keys", "-t", "one", "-l", "shared-label-42")
        second.run("send-keys", "-t", "one", "Enter")
        wait_until(
            lambda: "shared-label-42" in screen(second, "two"),
            15,
            "view two to show view one's focus edit",
            lambda: screen(second, "two"),
        )

        # attaching view one to an agent's window suspends that view only
        second.run("send-keys", "-t", "one", "t")
        wait_until(
            lambda: "mock-agent" in screen(second, "one"),
            10,
            "the attached window",
            lambda: screen(second, "one"),
        )
        started = time.monotonic()
        late = sandbox.swarm("send", "Bo", "while a view is attached", "--wait", "20")
        assert late.returncode == 0 and "delivered" in late.stdout, late.stdout + late.stderr
        assert sandbox.swarm("ls").returncode == 0
        assert time.monotonic() - started < 15

        # a killed engine is said in the views; started again, they re-attach
        sandbox_kill(int(pid))
        wait_until(
            lambda: "U starts it again" in screen(second, "two"),
            15,
            "view two to say the engine is gone, and offer to start it",
            lambda: screen(second, "two"),
        )
        second.run("send-keys", "-t", "two", "U")  # the view starts the engine again
        wait_until(
            lambda: engine(sandbox)["pid"] not in ("", pid),
            60,
            "a new engine",
            lambda: engine(sandbox)["line"],
        )
        wait_until(
            lambda: "engine unreachable" not in screen(second, "two"),
            20,
            "view two to re-attach to the new engine",
            lambda: screen(second, "two"),
        )
        rows = sandbox.journal("night")
        texts = [r["text"] for r in rows if r["sender"] == "human"]
        assert texts == ["while nobody watches", "while a view is attached"]
        assert json.loads(sandbox.swarm("ls", "--json").stdout)[0]["focus"] == "shared-label-42"
    finally:
        sandbox.swarm("stop", "night")


def sandbox_kill(pid: int) -> None:
    import os

    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not _alive(pid), 10, f"engine {pid} to die")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
