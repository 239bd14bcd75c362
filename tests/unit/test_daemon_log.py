"""The engine's log: rotated past its size (one old file kept), shown by `swarm logs`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swarm_tui import daemon


def test_a_log_past_its_size_is_rotated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "f.log"
    log.write_text("old\n" * 10)
    monkeypatch.setattr(daemon, "LOG_MAX", 20)
    daemon._rotate(log)
    assert not log.exists() and (tmp_path / "f.log.1").read_text().startswith("old")
    log.write_text("small\n")
    daemon._rotate(log)
    assert log.read_text() == "small\n"


def test_the_engine_process_writes_its_output_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "e.log"
    code = (
        "import sys; from pathlib import Path; from swarm_tui import daemon; "
        f"daemon.log_to(Path({str(log)!r})); print('to stdout'); "
        "print('to stderr', file=sys.stderr)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    assert log.read_text().splitlines() == ["to stdout", "to stderr"]
    assert log.stat().st_mode & 0o777 == 0o600


def test_show_log_prints_the_last_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "s.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert daemon.show_log(log, 3, follow=False) == 0
    assert capsys.readouterr().out.splitlines() == ["line 97", "line 98", "line 99"]
