"""Matching a grep pattern against agents' histories, in a child process of the engine.

Python's `re` holds the GIL for as long as a match takes, and a pattern such as `(a+)+$`
backtracks for minutes on a line of thirty `a`s: run in the engine, one `swarm grep` would
stop every reminder, delivery and screen of the fleet. So the engine compiles the pattern
only to say what is wrong with it, and the matching runs here, in a process of its own that
the engine kills at a deadline (swarm_tui/fleet/history.py).

The wire, one JSON object per line: first `{"pattern", "ignore_case", "context", "limit",
"max_bytes"}`, then one `{"agent", "lines"}` per agent as the engine reads them (plain text,
oldest first: the pane's rows as the window showed them, text that wrapped across rows not
joined, see history.py); when stdin ends, one line back: `{"hits": [{"agent", "lines":
[[number, text, is_match], ...]}, ...], "matches": N, "truncated": bool}`. Stdlib only.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

Run = list[tuple[int, str, bool]]  # (line number from 1, text, matched) of one run of lines


def search(
    lines: list[str], rx: re.Pattern[str], context: int, limit: int
) -> tuple[list[Run], int]:
    """Runs of matching lines with `context` lines either side, merged where they touch
    or overlap (as grep prints them); at most `limit` matches. Returns (runs, matches)."""
    hits: list[int] = []
    for i, line in enumerate(lines):
        if len(hits) >= limit:
            break
        if rx.search(line):
            hits.append(i)
    runs: list[Run] = []
    shown = -1  # the last line index already in a run
    for i in hits:
        start, end = max(0, i - context), min(len(lines) - 1, i + context)
        if runs and start <= shown + 1:
            run = runs[-1]
        else:
            run = []
            runs.append(run)
        for j in range(max(start, shown + 1), end + 1):
            run.append((j + 1, lines[j], False))
        shown = max(shown, end)
        number = i + 1
        for k, (n, text, _) in enumerate(run):
            if n == number:
                run[k] = (n, text, True)
                break
    return runs, len(hits)


def main() -> int:
    """The child's side: read the request and the histories, write the hits."""
    stdin = sys.stdin.buffer
    head = json.loads(stdin.readline())
    flags = re.IGNORECASE if head.get("ignore_case") else 0
    rx = re.compile(str(head["pattern"]), flags)
    context, limit = int(head["context"]), int(head["limit"])
    max_bytes = int(head["max_bytes"])
    out: list[dict[str, Any]] = []
    matches, size, truncated = 0, 0, False
    for raw in stdin:
        if truncated:
            continue  # read to the end: the engine's writes must not block
        item = json.loads(raw)
        runs, found = search([str(x) for x in item["lines"]], rx, context, limit - matches)
        matches += found
        for run in runs:
            # as sent: JSON escapes a non-ASCII character to 6 bytes (12 outside the BMP),
            # and each line is an object of its own (`{"line": …, "match": …}`)
            size += sum(len(json.dumps(text)) + 48 for _, text, _ in run)
            if size > max_bytes:
                truncated = True
                break
            out.append({"agent": item["agent"], "lines": run})
        if matches >= limit:
            truncated = True
    sys.stdout.write(json.dumps({"hits": out, "matches": matches, "truncated": truncated}))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
