"""Sum up a py-spy folded profile (`py-spy record --format raw`, or `bench_screen.py
--profile DIR`): the functions with the most samples, on the stack (inclusive) and on top
(self), as shares of all samples. Line numbers are dropped: a function is one entry.

    .venv/bin/python tests/bench/profile_summary.py DIR/viewer.txt [--top 25] [--under NAME]

--under NAME counts only the stacks that pass through a function whose name holds NAME.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^():]*)(?::\d+)?\)$")


def frames(stack: str) -> list[str]:
    """`func (path/file.py:12)` frames as `func (file.py)`, outermost first."""
    out = []
    for raw in stack.split(";"):
        m = _FRAME.match(raw.strip())
        out.append(f"{m['func']} ({Path(m['file']).name})" if m else raw.strip())
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("profile")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--under")
    a = p.parse_args()
    inclusive, own, total = Counter[str](), Counter[str](), 0
    for line in Path(a.profile).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        fs = frames(stack)
        if a.under and not any(a.under in f for f in fs):
            continue
        n = int(count)
        total += n
        own[fs[-1]] += n
        for f in set(fs):
            inclusive[f] += n
    print(f"{a.profile}: {total} samples" + (f" under {a.under!r}" if a.under else ""))
    for title, counts in (("inclusive", inclusive), ("self", own)):
        print(f"-- {title}")
        for f, n in counts.most_common(a.top):
            print(f"{100 * n / max(total, 1):5.1f}%  {f}")


if __name__ == "__main__":
    main()
