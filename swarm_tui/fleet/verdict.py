"""Reading a judge's verdict, strictly: a line `VERDICT R-1a2b: COMPLETE` or
`VERDICT R-1a2b: INCOMPLETE: reasons`. Anything else is no verdict, never a pass.

Every review has its own number (`R-1a2b`), which the review prompt gives apart from the
answer's template (`VERDICT <review number>: COMPLETE`). Real CLIs echo a pasted prompt in
their transcript, and a judge's screen still shows its earlier answers: only a line that
carries this review's number, and that is not part of the text the judge was sent, is the
judge's answer to this review.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass

LINE = re.compile(
    r"^VERDICT(?:\s+\[?(R-[0-9a-f]{4,})\]?)?\s*:\s*(COMPLETE|INCOMPLETE)"
    r"(?:\s*:\s*(.*?))?\s*$"
)
DECORATION = re.compile(r"^[\s*_`>#●⏺•\-]+|[\s*_`]+$")


@dataclass(frozen=True)
class Verdict:
    complete: bool
    reasons: str


def review_number() -> str:
    """A new review's number: unguessable, so nothing on a screen can carry it beforehand."""
    return f"R-{secrets.token_hex(3)}"


def _line_verdict(line: str, review: str | None, required: bool) -> Verdict | None:
    """The verdict on one line. A number, when the line has one, must be `review`'s;
    `required`: the line must have it (a headless answer echoes nothing, so may omit it)."""
    m = LINE.match(DECORATION.sub("", line))
    if not m:
        return None
    number, word, reasons = m.group(1), m.group(2), (m.group(3) or "").strip()
    if (number is None and required) or (number is not None and number != review):
        return None
    if word == "COMPLETE":
        return Verdict(True, "") if not reasons else None  # "COMPLETE: but ..." is no verdict
    if reasons.startswith("<"):
        return None  # the prompt's own template line, echoed
    return Verdict(False, reasons or "the judge gave no reasons")


def parse_answer(text: str, review: str | None = None) -> Verdict | None:
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
    return _line_verdict(lines[-1], review, required=False) if lines else None


def parse_screen(lines: list[str], review: str, sent: str = "") -> Verdict | None:
    """An interactive judge's screen: the last line carrying this review's verdict that is
    not a line of what the judge was sent (the CLI draws its input box and status below the
    answer, so the verdict cannot be the last line)."""
    echoed = " ".join(sent.split())
    for line in reversed(lines):
        verdict = _line_verdict(line, review, required=True)
        if verdict is None:
            continue
        if echoed and " ".join(DECORATION.sub("", line).split()) in echoed:
            continue  # text the judge was sent, shown back
        return verdict
    return None
