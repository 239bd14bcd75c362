"""Shared by the real-CLI tests: a fake LLM API server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from swarm_tui.testing.fake_llm import FakeLLM


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()
