"""`swarm ls`'s QUIET column says what the sidebar says: for an agent waiting on a prompt,
unreachable, idle or exited, how long that has lasted; for a working one, how long its
screen has been quiet. A new-user trial saw `0s` in `swarm ls` for agents the view showed as
`needs you 4m` (a dialog's CLI may keep redrawing), and `14s` for an agent idle for minutes
whose CLI had redrawn for a resized window."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import pytest

from swarm_tui import client


def test_quiet_follows_the_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()

    def agent(name: str, state: str) -> dict[str, Any]:
        return {
            "name": name,
            "role": "worker",
            "cli": "mock",
            "state": state,
            "last_output": now - 2,
            "state_since": now - 240,
            "context_left": 90,
            "queued": 0,
            "oldest_queued": None,
            "focus": "",
        }

    reply = {
        "agents": [
            agent("Asks", "needs-permission"),
            agent("Gone", "unreachable"),
            agent("Rests", "idle"),
            agent("Ended", "exited"),
            agent("Works", "working"),
        ]
    }
    monkeypatch.setattr(client, "_ask", lambda *a, **k: reply)
    assert client.cmd_ls(argparse.Namespace(json=False, fleet=None), Path("/nonexistent")) == 0
    rows = {line.split()[0]: line.split()[4] for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows == {"Asks": "4m", "Gone": "4m", "Rests": "4m", "Ended": "4m", "Works": "2s"}
