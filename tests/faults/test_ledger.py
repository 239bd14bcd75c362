"""The books themselves: a ledger that cannot see a loss would make the suite prove nothing."""

from __future__ import annotations

from tests.faults.ledger import Ledger, account


def test_account_sees_loss_duplicates_and_reordering() -> None:
    run = account(
        {"A": ["a1", "a2", "a3", "a4"], "B": ["b1", "b2"]},
        {"A": ["a2", "a1", "a1", "a4"], "B": ["b1", "b2", "x"]},
        uncertain={"a4"},
    )
    assert (run.sent, run.delivered, run.lost, run.duplicated, run.reordered, run.uncertain) == (
        6,
        5,
        1,
        1,
        1,
        1,
    )
    assert any("lost 'a3'" in p for p in run.problems)
    assert any("never sent" in p for p in run.problems)


def test_an_uncertain_message_may_be_missing_and_a_refused_one_is_not_counted() -> None:
    run = account(
        {"A": ["a1", "a2", "a3"]}, {"A": ["a1"]}, uncertain={"a2"}, journaled={"a1", "a2"}
    )
    assert (run.sent, run.delivered, run.lost, run.uncertain) == (2, 1, 0, 1)


def test_the_summary_line_adds_every_run_and_probe() -> None:
    ledger = Ledger()
    ledger.add(account({"A": ["1", "2"]}, {"A": ["1", "2"]}))
    ledger.add(account({"B": ["3"]}, {"B": []}))
    ledger.probe("identity", True)
    ledger.probe("fd limit", False)
    assert ledger.line() == (
        "fault suite: 3 messages sent, 2 delivered, 1 lost, 0 duplicated, "
        "0 reordered, 0 uncertain; probes 1/2 passed"
    )
