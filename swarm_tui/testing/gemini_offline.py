"""Gemini CLI, offline: a home whose settings skip every first-run dialog, and the env.

Gemini CLI (@google/gemini-cli 0.61.0) runs here against FakeLLM's Gemini API
(`GOOGLE_GEMINI_BASE_URL`, any `GEMINI_API_KEY`). `prepare_home` writes
`~/.gemini/settings.json`: API-key auth already chosen (no auth dialog), a theme (no theme
dialog), folder trust off (no trust dialog), no auto-update, no usage statistics. The model
must be named (`--model gemini-2.5-flash`): the default "Auto" model first asks a router
model for a JSON complexity score, which FakeLLM does not give, and the CLI retries it for
a long time before it answers.

Regenerate the screen captures the unit tests read:

    .venv/bin/python -m swarm_tui.testing.gemini_offline tests/fixtures/screens
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MODEL = "gemini-2.5-flash"
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "ui": {"theme": "Default"},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
_CONTEXT = re.compile(r"^<session_context>.*?</session_context>\s*", re.S)


def prepare_home(home: Path) -> Path:
    """A HOME whose Gemini CLI settings skip the auth, theme and trust dialogs."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    return home


def bin_dir(gemini: Path, where: Path) -> Path:
    """A directory holding only `gemini`, for an agent's PATH."""
    where.mkdir(parents=True, exist_ok=True)
    link = where / "gemini"
    if not link.exists():
        link.symlink_to(gemini)
    return where


def agent_env(home: Path, base_url: str, bindir: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "NO_BROWSER": "true",
        # Gemini CLI refuses interactive mode when CI is set (as it is in our CI run)
        "CI": "false",
    }


def user_part(text: str) -> str:
    """The user's text of a message Gemini CLI sent (its first turn carries a
    `<session_context>` part first)."""
    return _CONTEXT.sub("", text)


# ---------------------------------------------------------------------- screen captures
def _capture(out: Path) -> int:
    from swarm_tui.testing.clis import cli_path, why_missing
    from swarm_tui.testing.fake_llm import FakeLLM, Reply

    gemini = cli_path("gemini")
    if gemini is None:
        print(f"gemini unavailable: {why_missing('gemini')}", file=sys.stderr)
        return 1
    conf = Path(__file__).resolve().parents[1] / "tmux" / "swarm.conf"
    sock = f"swarm-gemini-screens-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="gemini-screens-"))
    fake = FakeLLM().start()

    def tmux(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(
            ["tmux", "-L", sock, "-f", str(conf), *args],
            check=True,
            capture_output=True,
            text=True,
            input=stdin,
        ).stdout

    def screen(pane: str, *flags: str) -> str:
        return tmux("capture-pane", "-p", *flags, "-t", pane)

    def wait(pane: str, ok: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = screen(pane)
            if ok(s):
                return s
            time.sleep(0.02)
        raise TimeoutError(f"timed out waiting for {what}:\n{screen(pane)}")

    def save(pane: str, name: str, *flags: str, text: str | None = None) -> None:
        (out / f"gemini-{name}.txt").write_text(text if text is not None else screen(pane, *flags))
        print(f"gemini-{name}.txt")

    def idle(s: str) -> bool:
        return "Type your message" in s and "esc to cancel" not in s

    try:
        tmux("new-session", "-d", "-s", "screens", "-x", "120", "-y", "40", "sleep 100000")
        home = prepare_home(work / "home")
        (work / "repo").mkdir()
        (work / "repo" / "notes.txt").write_text("Notes for the agent.\n")
        env = agent_env(home, fake.base_url, bin_dir(gemini, work / "bin"))
        argv = ["env", *(f"{k}={v}" for k, v in env.items()), "gemini", "--model", MODEL]
        a = tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-c",
            str(work / "repo"),
            "-n",
            "Hilbert",
            shlex.join(argv),
        ).strip()
        early: list[str] = []

        def seen(s: str) -> bool:
            if s.strip() and (not early or early[-1] != s):
                early.append(s)
            return idle(s) and "Initializing" not in s.split("Type your message")[0][-400:]

        try:
            wait(a, seen, "the idle prompt", 60)
        finally:
            for i, s in enumerate(early):
                (work / f"early-{i}.txt").write_text(s)
            print(f"{len(early)} early screens in {work}")
        before_box = [s for s in early if "Type your message" not in s]
        if before_box:  # the box comes up fast: a screen without it is seldom caught
            save(a, "starting", text=before_box[-1])
        save(a, "idle")
        tmux("send-keys", "-t", a, "-l", "fix the flaky test in tests/test_io.py")
        wait(a, lambda s: "> fix the flaky test" in s, "the draft")
        save(a, "draft")
        tmux("send-keys", "-t", a, "C-u")
        wait(a, lambda s: "flaky" not in s, "the cleared draft")
        tmux("load-buffer", "-b", "fixture", "-", stdin="first line of the plan\n\tsecond line")
        tmux("paste-buffer", "-p", "-r", "-d", "-b", "fixture", "-t", a)
        wait(a, lambda s: "second line" in s, "the pasted draft")
        save(a, "draft-multiline")
        time.sleep(0.5)  # an Enter within ~0.1 s of a paste is taken as a newline
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: "esc to cancel" not in s and "Done." in s, "the end of the turn")
        save(a, "idle-after-turn")

        long = " ".join(f"word{i}" for i in range(300))
        fake.push(Reply(f"Here is the plan. {long}", delay=8.0))
        tmux("send-keys", "-t", a, "-l", "Explain the plan.")
        time.sleep(0.5)  # gemini takes an Enter right after typing as a newline
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: "word40 " in s and "esc to cancel" in s, "streamed text")
        save(a, "working")
        save(a, "working-ansi", "-e", "-N")
        wait(a, lambda s: "esc to cancel" not in s and "word299" in s, "the end of the turn")

        fake.push(
            Reply(
                "",
                tool=(
                    "run_shell_command",
                    {"command": "touch made-by-agent.txt", "description": "Make a file."},
                ),
            )
        )
        tmux("send-keys", "-t", a, "-l", "list the files")
        time.sleep(0.5)
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: "Allow" in s and "esc to cancel" not in s, "the permission dialog")
        save(a, "permission")
    finally:
        fake.stop()
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(_capture(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
