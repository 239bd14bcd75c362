"""Shared by the real-CLI tests: a fake LLM API server per test, and a Codex fleet."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.testing.clis import require_cli
from swarm_tui.testing.codex_offline import codex_home
from swarm_tui.testing.fake_llm import FakeLLM


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return require_cli("codex")


@pytest.fixture
def codex_layout(sandbox, fake, codex_bin, tmp_path):
    """A layout with one Codex agent, Hilbert, in a trusted project that holds README.md."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# demo\n", encoding="utf-8")
    env = codex_home(tmp_path / "codex-home", fake.base_url, [project])
    env["PATH"] = f"{codex_bin.parent}:{os.environ['PATH']}"

    def make(**fields: object) -> Path:
        agent = {"name": "Hilbert", "cli": "codex", "cwd": str(project), "env": env, **fields}
        return sandbox.layout("codexfleet", agent)

    make.project = project  # type: ignore[attr-defined]
    return make
