"""Claude Code, offline: a private config dir that skips every first-run dialog, and the
environment that points the real CLI at a FakeLLM.

What Claude Code 2.1.332 asks on a first run, and the answer seeded here for each:
- theme picker and security notes: `hasCompletedOnboarding` (+ `theme`),
- "Detected a custom API key … use this API key?": `customApiKeyResponses.approved` holds the
  key's last 20 characters,
- "Do you trust the files in this folder?": `projects[<cwd>].hasTrustDialogAccepted`,
- "Make auto mode your default permission mode?": `disableAutoMode` in settings.json (auto
  mode would also approve tool calls itself, so no permission dialog could be tested),
- release notes and the auto-mode notice: `lastReleaseNotesSeen`, `hasSeenAutoDefaultNotice`.
Everything lives under `CLAUDE_CONFIG_DIR`, so the user's own ~/.claude* is never read.

Regenerate the screen fixtures (tests/fixtures/screens/claude-*.txt) from the real program:

    .venv/bin/python -m swarm_tui.testing.claude_offline capture tests/fixtures/screens
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# Any key works against the FakeLLM; it only has to look like one (and be approved below).
API_KEY = "sk-ant-api03-swarm-offline-test-key-0000000000"
VERSION_SEEN = "2.1.332"


def seed_config(
    config_dir: Path,
    projects: Iterable[Path],
    api_key: str = API_KEY,
    settings: dict[str, Any] | None = None,
) -> Path:
    """Write `.claude.json` and `settings.json` into `config_dir`; returns the dir."""
    config_dir.mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 1,
        "autoUpdates": False,
        "lastReleaseNotesSeen": VERSION_SEEN,
        "hasSeenAutoDefaultNotice": True,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {
            str(Path(p).resolve()): {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
                "allowedTools": [],
            }
            for p in projects
        },
    }
    (config_dir / ".claude.json").write_text(json.dumps(state, indent=1), encoding="utf-8")
    base: dict[str, Any] = {"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}}
    (config_dir / "settings.json").write_text(
        json.dumps({**base, **(settings or {})}), encoding="utf-8"
    )
    return config_dir


def offline_env(config_dir: Path, base_url: str, api_key: str = API_KEY) -> dict[str, str]:
    """Environment for `claude` that talks only to `base_url` and reads only `config_dir`."""
    return {
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


# ---------------------------------------------------------------------- fixture capture
def capture(out_dir: Path) -> None:  # pragma: no cover - a tool run by hand
    """Drive the real CLI in a private tmux server through each state; save the screens."""
    from swarm_tui.testing.clis import cli_path, why_missing
    from swarm_tui.testing.fake_llm import FakeLLM, Reply

    exe = cli_path("claude")
    if exe is None:
        raise SystemExit(f"claude unavailable: {why_missing('claude')}")
    root = Path(__file__).resolve().parents[2]
    conf = root / "swarm_tui" / "tmux" / "swarm.conf"
    sock = f"swarm-claude-screens-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="claude-screens-"))
    proj = work / "proj"
    proj.mkdir()
    fake = FakeLLM(default=Reply("Done: I looked at it.")).start()

    def tmux(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(
            ["tmux", "-L", sock, "-f", str(conf), *args],
            check=True,
            capture_output=True,
            text=True,
            input=stdin,
        ).stdout

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "c")

    def wait(pred: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = screen()
            if pred(text):
                return text
            time.sleep(0.05)
        raise TimeoutError(f"timed out waiting for {what}:\n{screen()}")

    def save(name: str, text: str) -> None:
        (out_dir / f"claude-{name}.txt").write_text(text, encoding="utf-8")
        print("saved", name)

    def paste(text: str) -> None:
        tmux("load-buffer", "-b", "cap", "-", stdin=text)
        tmux("paste-buffer", "-p", "-r", "-d", "-b", "cap", "-t", "c")

    def busy(text: str) -> bool:  # the footer, not the transcript, which quotes it
        lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
        return bool(lines) and "esc to interrupt" in lines[-1]

    def box_empty(text: str) -> bool:
        return "❯" in [ln.rstrip() for ln in text.splitlines()] and not busy(text)

    def start(config: Path, name: str = "c") -> None:
        env = " ".join(f"{k}={v}" for k, v in offline_env(config, fake.base_url).items())
        tmux(
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(proj),
            f"env {env} {exe}",
        )

    try:
        # first-run dialogs: an unseeded config dir (trust, API key) -------------------
        bare = work / "bare"
        bare.mkdir()
        (bare / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "theme": "dark",
                    "lastReleaseNotesSeen": VERSION_SEEN,
                    "hasSeenAutoDefaultNotice": True,
                }
            ),
            encoding="utf-8",
        )
        (bare / "settings.json").write_text(
            json.dumps({"permissions": {"disableAutoMode": "disable"}}), encoding="utf-8"
        )
        start(bare, "c")
        wait(lambda s: "Do you" in s or "trust" in s, "a first-run dialog")
        time.sleep(0.5)  # the dialog finishes drawing (a capture tool; tests never sleep)
        save("trust-dialog", screen())
        tmux("kill-session", "-t", "c")
        # trusted, but the API key not yet approved
        keyless = seed_config(work / "keyless", [proj], api_key="sk-ant-some-other-key-xxxx")
        start(keyless, "c")
        wait(lambda s: "API key" in s, "the API key dialog")
        time.sleep(0.5)
        save("api-key-dialog", screen())
        tmux("kill-session", "-t", "c")

        # the seeded config: straight to the prompt --------------------------------------
        config = seed_config(work / "config", [proj])
        start(config)
        save("starting", wait(lambda s: True, "anything"))
        save("idle", wait(lambda s: box_empty(s) and "for shortcuts" in s, "the idle prompt"))
        tmux("send-keys", "-t", "c", "-l", "fix the flaky test in tests/test_io.py")
        save("draft", wait(lambda s: "fix the flaky test" in s, "the draft"))
        tmux("send-keys", "-t", "c", "Escape", "Escape")
        wait(box_empty, "the cleared box")
        paste("first line of the plan\nsecond line: run it")
        save("draft-multiline", wait(lambda s: "second line: run it" in s, "multi-line draft"))
        tmux("send-keys", "-t", "c", "Escape", "Escape")
        wait(box_empty, "the cleared box")
        paste("\n".join(f"line {i} of a long message" for i in range(1, 46)))
        save("draft-pasted", wait(lambda s: "[Pasted text #" in s, "the paste marker"))
        tmux("send-keys", "-t", "c", "Escape", "Escape")
        wait(box_empty, "the cleared box")
        paste("/notacommand please")
        save("draft-slash", wait(lambda s: "/notacommand please" in s, "the slash draft"))
        tmux("send-keys", "-t", "c", "Escape", "Escape")
        wait(box_empty, "the cleared box")

        fake.push(
            Reply(
                "Here is a slow answer that streams for a while, word by word, "
                "so the busy state can be seen. The transcript quotes the chrome: "
                "esc to interrupt, Do you want to proceed? and ❯ prompts.",
                delay=6,
            )
        )
        paste("explain the lexer")
        time.sleep(0.2)
        tmux("send-keys", "-t", "c", "Enter")
        save("working", wait(lambda s: busy(s) and "…" in s, "busy"))
        tmux("send-keys", "-t", "c", "-l", "and then the parser")
        save(
            "working-draft",
            wait(lambda s: "and then the parser" in s and "… (" in s, "busy with a draft"),
        )
        tmux("send-keys", "-t", "c", "C-u")
        save(
            "idle-after-turn",
            wait(lambda s: box_empty(s) and "for shortcuts" in s, "idle after the turn", 20),
        )

        fake.push(
            Reply(
                tool=(
                    "Bash",
                    {"command": "touch made-by-claude.txt", "description": "Create a file"},
                )
            )
        )
        paste("make a file")
        time.sleep(0.2)
        tmux("send-keys", "-t", "c", "Enter")
        save(
            "permission",
            wait(
                lambda s: "Do you want to proceed?" in s and "Esc to cancel" in s,
                "the permission dialog",
            ),
        )
        tmux("send-keys", "-t", "c", "Escape")
        wait(lambda s: box_empty(s) and "for shortcuts" in s, "idle after the refusal")

    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
        fake.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) != 3 or sys.argv[1] != "capture":
        raise SystemExit("usage: python -m swarm_tui.testing.claude_offline capture OUT_DIR")
    capture(Path(sys.argv[2]))
