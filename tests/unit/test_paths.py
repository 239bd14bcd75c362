"""The state directory: private, and one clear line when it cannot be used."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from swarm_tui import paths
from swarm_tui.errors import SwarmError


def test_a_new_state_directory_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HOME", str(tmp_path / "new" / "home"))
    old = os.umask(0o022)
    try:
        run = paths.run_dir()
    finally:
        os.umask(old)
    for path in (run.parent, run):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_an_unusable_state_directory_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SWARM_HOME", str(blocker / "home"))
    with pytest.raises(SwarmError) as exc:
        paths.state_dir()
    message = str(exc.value)
    assert str(blocker / "home") in message and "SWARM_HOME" in message
    assert "\n" not in message
