"""opencode, pinned, run offline against a FakeLLM: its config and environment.

opencode reads a custom provider from `opencode.json`: `@ai-sdk/openai-compatible` with
`baseURL` = the fake's `/v1` (the SDK is bundled in the binary, nothing to download). Every
directory opencode writes to (config, data, cache, state) is moved under a private HOME, and
model-list fetches (models.dev), auto-update, sharing, LSP downloads and default plugins are
switched off, so it starts with no network at all.

Measured with opencode-ai 1.18.33: first screen ~3-5 s after launch; it asks the model for a
session title in the background (a streamed chat request whose system prompt mentions the
title) before the real turn, so a scripted `Reply` may be taken by the title request: tests
set `FakeLLM.default` instead of pushing a script.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from swarm_tui.testing.clis import AGENTS

MODEL = "fake/fake-model"  # provider id / model id as opencode spells it


def write_config(home: Path, base_url: str, permission: dict[str, str] | None = None) -> Path:
    """Write `home/opencode.json` pointing opencode at the fake server; returns its path."""
    home.mkdir(parents=True, exist_ok=True)
    config: dict[str, object] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": MODEL,
        "small_model": MODEL,
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": "fake-key"},
                "models": {"fake-model": {"name": "Fake Model"}},
            },
        },
    }
    if permission:
        config["permission"] = permission
    path = home / "opencode.json"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def opencode_env(
    home: Path, base_url: str, permission: dict[str, str] | None = None
) -> dict[str, str]:
    """Environment for an offline opencode whose files all live under `home`."""
    config = write_config(home, base_url, permission)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG": str(config),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
        "PATH": f"{AGENTS / 'node_modules' / '.bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


# ---------------------------------------------------------------------- screen captures
# `python -m swarm_tui.testing.opencode_offline tests/fixtures/screens` regenerates the
# opencode-*.txt captures the unit tests read: a private tmux server with swarm's own config,
# a 120x40 window, the real CLI against a FakeLLM, waits on what the screen shows.

CONF = Path(__file__).resolve().parents[1] / "tmux" / "swarm.conf"


class Pane:
    """One CLI in the only window of a private tmux server (driven by `tmux` subprocesses)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path):
        import shlex
        import subprocess

        self.socket = f"swarm-capture-{os.getpid()}"
        self._subprocess = subprocess
        env_args = [a for k, v in env.items() if k != "PATH" for a in ("-e", f"{k}={v}")]
        # tmux gives a new pane the client's PATH whatever -e says: set it in the command
        path = env.get("PATH", os.environ.get("PATH", ""))
        command = f"PATH={shlex.quote(path)}; export PATH; exec {shlex.join(argv)}"
        self.tmux(
            "new-session",
            "-d",
            "-s",
            "cap",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(cwd),
            *env_args,
            command,
        )

    def tmux(self, *args: str, stdin: str | None = None) -> str:
        return self._subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(CONF), *args],
            check=True,
            capture_output=True,
            text=True,
            input=stdin,
        ).stdout

    def screen(self, *flags: str) -> str:
        return self.tmux("capture-pane", "-p", *flags, "-t", "cap")

    def paste(self, text: str) -> None:
        self.tmux("load-buffer", "-b", "cap", "-", stdin=text)
        self.tmux("paste-buffer", "-p", "-r", "-d", "-b", "cap", "-t", "cap")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "cap", *keys)

    def wait(self, predicate: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        from swarm_tui.testing.waiting import wait_until

        def shown() -> str:
            screen = self.screen()
            return screen if predicate(screen) else ""

        return str(wait_until(shown, timeout, what, self.screen, interval=0.05))

    def save(self, path: Path, *flags: str) -> None:
        path.write_text(self.screen(*flags), encoding="utf-8")
        print(f"saved {path.name}", flush=True)

    def kill(self) -> None:
        self._subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def capture(dest: Path) -> None:
    """Drive a real opencode through its states and save each screen as opencode-<state>.txt."""
    import tempfile
    import time

    from swarm_tui.testing.clis import cli_path
    from swarm_tui.testing.fake_llm import FakeLLM, Reply
    from swarm_tui.testing.waiting import wait_until

    exe = cli_path("opencode")
    assert exe is not None, "opencode cannot be installed here"
    fake = FakeLLM(default=Reply("Done: I looked at the parser and it seems fine.", 3.0)).start()
    root = Path(tempfile.mkdtemp(prefix="oc-capture-"))
    (root / "proj").mkdir()
    env = opencode_env(root / "home", fake.base_url, permission={"bash": "ask"})
    pane = Pane([str(exe)], env, root / "proj")
    try:
        time.sleep(0.3)  # not a wait: the point is the screen before opencode draws
        pane.save(dest / "opencode-starting.txt")
        pane.wait(lambda s: "Ask anything" in s and "ctrl+p commands" in s, "the home screen")
        pane.save(dest / "opencode-idle.txt")
        pane.paste("fix the flaky test in tests/test_io.py")
        pane.wait(lambda s: "test_io.py" in s, "the draft")
        pane.save(dest / "opencode-draft.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "Ask anything" in s, "the box to clear")
        pane.paste("first line of the plan\nsecond line: run it")
        pane.wait(lambda s: "second line" in s, "the multi-line draft")
        pane.save(dest / "opencode-draft-multiline.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "Ask anything" in s, "the box to clear")
        pane.paste("".join(f"line {i} of a long paste\n" for i in range(12)))
        pane.wait(lambda s: "[Pasted" in s, "the paste marker")
        pane.save(dest / "opencode-draft-pasted.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "Ask anything" in s, "the box to clear")
        pane.paste("please look at the parser")
        time.sleep(0.3)  # the TUI takes an Enter right after a paste as part of it
        pane.keys("Enter")
        pane.wait(lambda s: "esc interrupt" in s, "the busy footer")
        pane.save(dest / "opencode-working.txt")
        pane.save(dest / "opencode-working-ansi.txt", "-e", "-N")
        pane.paste("and then the lexer")
        pane.wait(lambda s: "then the lexer" in s and "esc interrupt" in s, "a draft while busy")
        pane.save(dest / "opencode-working-draft.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "esc interrupt" not in s and "seems fine" in s, "the turn's end")
        pane.wait(lambda s: "then the lexer" not in s, "the box to clear")
        pane.save(dest / "opencode-idle-after-turn.txt")
        # a tool call that the config says to ask about
        fake.default = Reply(
            tool=("bash", {"command": "touch made-by-agent.txt", "description": "Create a file"})
        )
        pane.paste("make a file please")
        time.sleep(0.3)
        pane.keys("Enter")
        pane.wait(lambda s: "Permission required" in s, "the permission dialog")
        pane.save(dest / "opencode-permission.txt")
        # only colours say which option is selected: the first, then (right) the second
        pane.save(dest / "opencode-permission-ansi.txt", "-e", "-N")
        first = pane.screen("-e", "-N")
        pane.keys("Right")
        wait_until(lambda: pane.screen("-e", "-N") != first, 10, "the selection to move")
        pane.save(dest / "opencode-permission-moved-ansi.txt", "-e", "-N")
        pane.keys("Enter")  # "Allow always" asks again
        pane.wait(lambda s: "Always allow" in s and "Confirm" in s, "the always-allow dialog")
        pane.save(dest / "opencode-always-allow.txt")
        pane.save(dest / "opencode-always-allow-ansi.txt", "-e", "-N")
    finally:
        pane.kill()
        fake.stop()


if __name__ == "__main__":
    import sys

    capture(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/screens"))
