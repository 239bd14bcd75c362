"""The fault suite prints one summary line of everything its tests sent and saw."""

from __future__ import annotations

from typing import Any

import pytest

from tests.faults.ledger import LEDGER, Ledger


@pytest.fixture
def ledger() -> Ledger:
    return LEDGER


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if LEDGER.runs or LEDGER.probes:
        terminalreporter.write_line(LEDGER.line())
