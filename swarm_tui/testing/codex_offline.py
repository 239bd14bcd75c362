"""Run the real Codex CLI offline against a FakeLLM: a private CODEX_HOME that needs no login.

`codex_home(path, fake.base_url, [project])` writes `config.toml` with a custom model provider
at the fake's `/v1` (Responses wire API; its key comes from FAKE_OPENAI_KEY, so no login and
no auth.json), approvals on request, the project trusted, the context left shown in the status
line; it returns the environment an agent's window needs. Codex names each new thread with a
structured-output side request: `conversation_texts(fake)` leaves those out of what was asked.
"""

from __future__ import annotations

import json
from pathlib import Path

from swarm_tui.testing.fake_llm import FakeLLM, is_structured_request, last_user_text

KEY_ENV = "FAKE_OPENAI_KEY"
MODEL = "fake-model"


def _s(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def codex_home(home: Path, base_url: str, projects: list[Path]) -> dict[str, str]:
    """Write CODEX_HOME/config.toml for offline use; returns the agent's environment."""
    home.mkdir(parents=True, exist_ok=True)
    lines = [
        f"model = {_s(MODEL)}",
        'model_provider = "fake"',
        'approval_policy = "on-request"',
        'sandbox_mode = "workspace-write"',
        "check_for_update_on_startup = false",
        "",
        "[features]",
        "daemon_auto_start = false",
        "",
        "[tui]",
        "screen_reader_detection_done = true",
        'status_line = ["model-with-reasoning", "context-remaining", "current-dir"]',
        "",
        "[model_providers.fake]",
        'name = "FakeLLM"',
        f"base_url = {_s(base_url.rstrip('/') + '/v1')}",
        'wire_api = "responses"',
        f"env_key = {_s(KEY_ENV)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    for project in projects:
        lines += ["", f"[projects.{_s(str(project.resolve()))}]", 'trust_level = "trusted"']
    (home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"CODEX_HOME": str(home), KEY_ENV: "fake-key"}


def conversation_texts(fake: FakeLLM) -> list[str]:
    """`fake.user_texts()` without Codex's thread-title side requests."""
    with fake._lock:  # noqa: SLF001 - the fake's own log, read under its lock
        bodies = [r.body for r in fake.requests if r.path.endswith("/responses")]
    out: list[str] = []
    for body in bodies:
        if is_structured_request(body):
            continue
        text = last_user_text(body)
        if text is not None and (not out or out[-1] != text):
            out.append(text)
    return out
