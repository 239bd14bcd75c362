"""Reading a judge's verdict, strictly: a line `VERDICT: COMPLETE` or
`VERDICT: INCOMPLETE: reasons`. Anything else is no verdict, never a pass."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

LINE = re.compile(r"^VERDICT:\s*(COMPLETE|INCOMPLETE)(?:\s*:\s*(.*?))?\s*$")
DECORATION = re.compile(r"^[\s*_`>#●⏺•\-]+|[\s*_`]+$")


@dataclass(frozen=True)
class Verdict:
    complete: bool
    reasons: str


def _line_verdict(line: str) -> Verdict | None:
    m = LINE.match(DECORATION.sub("", line))
    if not m:
        return None
    word, reasons = m.group(1), (m.group(2) or "").strip()
    if word == "COMPLETE":
        return Verdict(True, "") if not reasons else None  # "COMPLETE: but ..." is no verdict
    if reasons.startswith("<"):
        return None  # the prompt's own template line, echoed
    return Verdict(False, reasons or "the judge gave no reasons")


def parse_answer(text: str) -> Verdict | None:
    """A headless judge's whole answer: its last non-empty line must be the verdict. A JSON
    answer (`claude -p --output-format json`) is unwrapped first."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
            if isinstance(data, dict) and isinstance(data.get("result"), str):
                stripped = data["result"].strip()
        except json.JSONDecodeError:
            pass
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    return _line_verdict(lines[-1]) if lines else None


def parse_screen(lines: list[str], after: int = 0) -> Verdict | None:
    """An interactive judge's screen: the last verdict line (the CLI draws its input box and
    status below the answer, so it cannot be the last line)."""
    for line in reversed(lines[after:]):
        verdict = _line_verdict(line)
        if verdict is not None:
            return verdict
    return None
