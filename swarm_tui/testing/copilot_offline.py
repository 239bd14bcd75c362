"""GitHub Copilot CLI, pinned, run offline against a FakeLLM: its environment.

Copilot CLI 1.0.x has a documented offline mode (`copilot help environment`):
`COPILOT_OFFLINE=true` skips GitHub authentication, telemetry, web tools, the GitHub MCP
server and auto-update, and needs a "bring your own key" provider, here the fake's
OpenAI-compatible Chat Completions endpoint (`COPILOT_PROVIDER_BASE_URL` = fake + `/v1`).
No GitHub account or token is involved. `COPILOT_HOME` keeps its state out of `~/.copilot`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from swarm_tui.testing.clis import AGENTS

MODEL = "fake-model"


def copilot_env(home: Path, base_url: str, trusted: tuple[Path, ...] = ()) -> dict[str, str]:
    """Environment for an offline Copilot CLI whose files all live under `home`; folders in
    `trusted` skip the "Confirm folder trust" dialog (as if answered "remember")."""
    (home / ".copilot").mkdir(parents=True, exist_ok=True)
    if trusted:
        config = {"trustedFolders": [str(t) for t in trusted], "appTipShown": True}
        (home / ".copilot" / "config.json").write_text(
            json.dumps(config, indent=2) + "\n", encoding="utf-8"
        )
    return {
        "HOME": str(home),
        "COPILOT_HOME": str(home / ".copilot"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{base_url}/v1",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_API_KEY": "fake-key",
        "COPILOT_MODEL": MODEL,
        # a model the built-in catalog does not know: say its limits, so no warning is shown
        "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "128000",
        "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS": "8192",
        "COPILOT_AUTO_UPDATE": "false",
        "PATH": f"{AGENTS / 'node_modules' / '.bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


def capture(dest: Path) -> None:
    """Drive a real Copilot CLI through its states and save each screen as copilot-<state>.txt
    (`python -m swarm_tui.testing.copilot_offline tests/fixtures/screens`)."""
    import tempfile
    import time

    from swarm_tui.testing.clis import cli_path
    from swarm_tui.testing.fake_llm import FakeLLM, Reply
    from swarm_tui.testing.opencode_offline import Pane

    exe = cli_path("copilot")
    assert exe is not None, "copilot cannot be installed here"
    fake = FakeLLM(default=Reply("Done: I looked at the parser and it seems fine.", 3.0)).start()
    root = Path(tempfile.mkdtemp(prefix="cp-capture-"))
    (root / "proj").mkdir()
    pane = Pane([str(exe)], copilot_env(root / "home", fake.base_url), root / "proj")
    try:
        pane.wait(lambda s: "Do you trust the files" in s, "the folder trust dialog")
        pane.save(dest / "copilot-trust.txt")
        pane.keys("Enter")
        pane.wait(lambda s: "/ commands" in s, "the empty input box")
        pane.save(dest / "copilot-idle.txt")
        pane.paste("fix the flaky test in tests/test_io.py")
        pane.wait(lambda s: "test_io.py" in s, "the draft")
        pane.save(dest / "copilot-draft.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "test_io.py" not in s, "the box to clear")
        pane.paste("first line of the plan\nsecond line: run it")
        pane.wait(lambda s: "second line" in s, "the multi-line draft")
        pane.save(dest / "copilot-draft-multiline.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "second line" not in s, "the box to clear")
        pane.paste("".join(f"line {i} of a long paste\n" for i in range(12)))
        pane.wait(lambda s: "[Paste" in s, "the paste marker")
        pane.save(dest / "copilot-draft-pasted.txt")
        pane.keys("C-c")
        pane.wait(lambda s: "[Paste" not in s, "the box to clear")
        pane.paste("please look at the parser")
        time.sleep(0.3)  # the TUI takes an Enter right after a paste as part of it
        pane.keys("Enter")
        pane.wait(lambda s: "Working" in s, "the busy status line")
        pane.save(dest / "copilot-working.txt")
        pane.save(dest / "copilot-working-ansi.txt", "-e", "-N")
        pane.paste("and then the lexer")
        pane.wait(lambda s: "then the lexer" in s and "Working" in s, "a draft while busy")
        pane.save(dest / "copilot-working-draft.txt")
        # ctrl+c while busy would cancel the turn: let it end, then clear the draft
        pane.wait(lambda s: "Working" not in s and "seems fine" in s, "the turn's end")
        pane.keys("C-c")
        pane.wait(lambda s: "then the lexer" not in s, "the box to clear")
        pane.save(dest / "copilot-idle-after-turn.txt")
        fake.default = Reply(
            tool=("bash", {"command": "touch made-by-agent.txt", "description": "Create a file"})
        )
        pane.paste("make a file please")
        time.sleep(0.3)
        pane.keys("Enter")
        pane.wait(lambda s: "Do you want to run this command" in s, "the permission dialog")
        pane.save(dest / "copilot-permission.txt")
    finally:
        pane.kill()
        fake.stop()


if __name__ == "__main__":
    import sys

    capture(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/screens"))
