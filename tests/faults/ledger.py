"""The fault suite's books: what was sent, what each agent got, and what went wrong.

Every fault test adds its run to one `Ledger`; the suite prints a single line at the end
(`pytest_terminal_summary` in conftest.py) and each test asserts its own run had nothing
lost, duplicated or reordered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field


@dataclass
class Run:
    """One fault run's counts."""

    sent: int = 0
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    uncertain: int = 0
    problems: list[str] = field(default_factory=list)


def account(
    sent: dict[str, list[str]],
    received: dict[str, list[str]],
    uncertain: Collection[str] = (),
    journaled: Collection[str] | None = None,
) -> Run:
    """Compare what each agent was sent (in order, texts unique) with what it received.

    `uncertain` texts may arrive once or not at all; `journaled`, when given, is the set of
    texts the engine accepted (a send it refused is not lost when it never arrives).
    """
    run = Run()
    for agent, texts in sent.items():
        got = received.get(agent, [])
        counts = Counter(got)
        expected = [t for t in texts if journaled is None or t in journaled]
        run.sent += len(expected)
        for text in expected:
            n = counts.get(text, 0)
            if n == 0 and text in uncertain:
                run.uncertain += 1
            elif n == 0:
                run.lost += 1
                run.problems.append(f"{agent}: lost {text!r}")
            else:
                run.delivered += 1
                if text in uncertain:
                    run.uncertain += 1
            if n > 1:
                run.duplicated += n - 1
                run.problems.append(f"{agent}: {text!r} arrived {n} times")
        strangers = [t for t in got if t not in set(texts)]
        if strangers:
            run.problems.append(f"{agent}: got texts never sent to it: {strangers[:3]!r}")
        order = {t: i for i, t in enumerate(texts)}
        seen = [order[t] for t in dict.fromkeys(got) if t in order]
        for before, after in zip(seen, seen[1:], strict=False):
            if after < before:
                run.reordered += 1
                run.problems.append(f"{agent}: {texts[after]!r} arrived after {texts[before]!r}")
    return run


@dataclass
class Ledger:
    """The whole suite's totals and probes."""

    runs: list[Run] = field(default_factory=list)
    probes: list[tuple[str, bool]] = field(default_factory=list)

    def add(self, run: Run) -> Run:
        self.runs.append(run)
        return run

    def probe(self, name: str, passed: bool) -> bool:
        self.probes.append((name, passed))
        return passed

    def line(self) -> str:
        total = Run()
        for run in self.runs:
            for name in ("sent", "delivered", "lost", "duplicated", "reordered", "uncertain"):
                setattr(total, name, getattr(total, name) + getattr(run, name))
        passed = sum(1 for _, ok in self.probes if ok)
        return (
            f"fault suite: {total.sent} messages sent, {total.delivered} delivered, "
            f"{total.lost} lost, {total.duplicated} duplicated, {total.reordered} "
            f"reordered, {total.uncertain} uncertain; probes {passed}/{len(self.probes)} "
            "passed"
        )


LEDGER = Ledger()
