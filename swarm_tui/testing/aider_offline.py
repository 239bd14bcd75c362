"""aider, offline: a home that needs no network, a git repo to work in, and the flags.

aider (aider-chat 0.86.2) runs here against FakeLLM as an OpenAI-compatible server
(`OPENAI_API_BASE`, model `openai/fake-model`). Two things would otherwise reach the
internet: litellm's model price list, which aider fetches into `~/.aider/caches/` unless a
fresh non-empty copy is there (so `prepare_home` writes one that describes the fake model),
and the version check (`--no-check-update`). Analytics and release notes are switched off by
flag, so no question waits at startup.

Regenerate the screen captures the unit tests read:

    .venv/bin/python -m swarm_tui.testing.aider_offline tests/fixtures/screens
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MODEL = "openai/fake-model"
FLAGS = (
    "--no-check-update",
    "--no-show-model-warnings",
    "--no-gitignore",
    "--no-auto-commits",
    "--analytics-disable",
    "--no-show-release-notes",
    "--edit-format",
    "whole",
    "--map-tokens",
    "0",
)
# aider appends this reminder (its whole-file edit format's) to the user message it sends
REMINDER = "\n\nTo suggest changes to a file you MUST return the entire content"
REPO_FILES = {
    "notes.txt": "Notes for the agent.\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
}


def prepare_home(home: Path) -> Path:
    """A HOME for aider whose model-info cache is fresh, so it never fetches it."""
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True, exist_ok=True)
    info = {
        MODEL: {
            "max_input_tokens": 128000,
            "max_tokens": 8192,
            "max_output_tokens": 8192,
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
            "litellm_provider": "openai",
            "mode": "chat",
        }
    }
    (caches / "model_prices_and_context_window.json").write_text(json.dumps(info))
    # aider checks git's identity at startup and warns without one
    (home / ".gitconfig").write_text("[user]\n\tname = swarm\n\temail = swarm@example.invalid\n")
    return home


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository with a few committed files (aider asks to add mentioned ones)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (REPO_FILES if files is None else files).items():
        (path / name).write_text(text)
    git = [
        "git",
        "-c",
        "user.name=swarm",
        "-c",
        "user.email=swarm@example.invalid",
        "-c",
        "init.defaultBranch=main",
    ]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run([*git, *args], cwd=path, check=True, capture_output=True)
    return path


def bin_dir(aider: Path, where: Path) -> Path:
    """A directory holding only `aider` (not the rest of its venv) for an agent's PATH."""
    where.mkdir(parents=True, exist_ok=True)
    link = where / "aider"
    if not link.exists():
        link.symlink_to(aider)
    return where


def agent_env(home: Path, base_url: str, bindir: Path) -> dict[str, str]:
    """The environment an aider agent needs to talk to FakeLLM and nothing else."""
    return {
        "HOME": str(home),
        "PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "OPENAI_API_BASE": f"{base_url}/v1",
        "OPENAI_API_KEY": "sk-fake",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def user_part(text: str) -> str:
    """The user's own text of a message aider sent (its edit-format reminder cut off)."""
    return text.split(REMINDER, 1)[0]


# ---------------------------------------------------------------------- screen captures
def _capture(out: Path) -> int:
    from swarm_tui.testing.clis import cli_path, why_missing
    from swarm_tui.testing.fake_llm import FakeLLM, Reply

    aider = cli_path("aider")
    if aider is None:
        print(f"aider unavailable: {why_missing('aider')}", file=sys.stderr)
        return 1
    conf = Path(__file__).resolve().parents[1] / "tmux" / "swarm.conf"
    sock = f"swarm-aider-screens-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="aider-screens-"))
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

    def tail(s: str) -> list[str]:
        return [ln.rstrip() for ln in s.splitlines() if ln.strip()]

    def save(pane: str, name: str, *flags: str) -> None:
        (out / f"aider-{name}.txt").write_text(screen(pane, *flags))
        print(f"aider-{name}.txt")

    def start(name: str) -> str:
        home = prepare_home(work / name / "home")
        repo = make_repo(work / name / "repo")
        env = agent_env(home, fake.base_url, bin_dir(aider, work / name / "bin"))
        argv = ["env", *(f"{k}={v}" for k, v in env.items()), "aider", "--model", MODEL, *FLAGS]
        return tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-c",
            str(repo),
            "-n",
            name,
            " ".join(_sh(a) for a in argv),
        ).strip()

    def idle(s: str) -> bool:
        t = tail(s)
        return bool(t) and t[-1] == ">" and t[-2].startswith("─")

    try:
        tmux("new-session", "-d", "-s", "screens", "-x", "120", "-y", "40", "sleep 100000")
        a = start("Hilbert")
        early: list[str] = []  # every screen before the prompt: startup is quick

        def seen(s: str) -> bool:
            if tail(s) and not idle(s) and (not early or early[-1] != s):
                early.append(s)
            return idle(s)

        wait(a, seen, "the prompt")
        banner = [s for s in early if "Aider v" in s]
        for name, s in (
            ("starting-first", early[0] if early else ""),
            ("starting", banner[-1] if banner else ""),
        ):
            if s:
                (out / f"aider-{name}.txt").write_text(s)
                print(f"aider-{name}.txt")
        save(a, "idle")
        tmux("send-keys", "-t", a, "-l", "fix the flaky test in tests/test_io.py")
        wait(a, lambda s: "> fix the flaky test" in s, "the draft")
        save(a, "draft")
        tmux("send-keys", "-t", a, "C-End", "C-S-Home", "BSpace")
        wait(a, idle, "the cleared draft")
        tmux("load-buffer", "-b", "fixture", "-", stdin="first line of the plan\n\tsecond line")
        tmux("paste-buffer", "-p", "-r", "-d", "-b", "fixture", "-t", a)
        wait(a, lambda s: "second line" in s, "the pasted draft")
        save(a, "draft-multiline")
        tmux("send-keys", "-t", a, "C-End", "C-S-Home", "BSpace")
        wait(a, idle, "the cleared draft")

        fake.push(Reply("Looking.", delay=4.0))
        tmux("send-keys", "-t", a, "-l", "Rewrite the tokenizer so it streams.")
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: "Waiting for" in s, "the spinner")
        save(a, "waiting")
        wait(a, idle, "the end of the turn")
        long = " ".join(f"word{i}" for i in range(400))
        fake.push(Reply(f"Here is the plan. {long}", delay=6.0))
        tmux("send-keys", "-t", a, "-l", "Explain the plan.")
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: "word40 " in s, "streamed text")
        save(a, "working")
        save(a, "working-ansi", "-e", "-N")
        wait(a, idle, "the end of the turn")
        save(a, "idle-after-turn")

        tmux("send-keys", "-t", a, "-l", "please read notes.txt")
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: tail(s)[-1].endswith("[Yes]:"), "the add-file question")
        save(a, "permission-file")
        tmux("send-keys", "-t", a, "n", "Enter")
        wait(a, idle, "the end of the turn")

        fake.push(Reply("hello.py\n```\nprint('hello')\n```\n"))
        tmux("send-keys", "-t", a, "-l", "write hello.py")
        tmux("send-keys", "-t", a, "Enter")
        wait(
            a,
            lambda s: "Create new file" in s and tail(s)[-1].endswith("]:"),
            "the create-file question",
        )
        save(a, "permission-create")
        tmux("send-keys", "-t", a, "n", "Enter")
        wait(a, idle, "the end of the turn")
        tmux("send-keys", "-t", a, "-l", "/clear")
        tmux("send-keys", "-t", a, "Enter")
        wait(a, lambda s: tail(s)[-1] == ">" and "> /clear" in tail(s)[-5:-1], "/clear")
        save(a, "idle-after-clear")
    finally:
        fake.stop()
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return 0


def _sh(word: str) -> str:
    import shlex

    return shlex.quote(word)


if __name__ == "__main__":
    sys.exit(_capture(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
