"""Verdicts are parsed strictly; anything unclear is no verdict, never a pass."""

from __future__ import annotations

import pytest

from swarm_tui.fleet.verdict import Verdict, parse_answer, parse_screen


@pytest.mark.parametrize("text, expected", [
    ("I read it all.\nVERDICT: COMPLETE", Verdict(True, "")),
    ("VERDICT: INCOMPLETE: tests fail; no docs", Verdict(False, "tests fail; no docs")),
    ("**VERDICT: COMPLETE**", Verdict(True, "")),
    ("`VERDICT: INCOMPLETE: x`\n\n", Verdict(False, "x")),
    ("VERDICT: INCOMPLETE", Verdict(False, "the judge gave no reasons")),
    ('{"type":"result","result":"ok\\nVERDICT: COMPLETE"}', Verdict(True, "")),
])
def test_clear_verdicts(text: str, expected: Verdict) -> None:
    assert parse_answer(text) == expected


@pytest.mark.parametrize("text", [
    "",
    "Looks good to me.",
    "VERDICT: COMPLETE\nActually, wait: the tests were never run.",  # not the last line
    "VERDICT: COMPLETE: mostly",  # a hedge is not a verdict
    "verdict: complete",
    "VERDICT: COMPLETE?",
    "Final VERDICT: COMPLETE",
    "VERDICT: INCOMPLETE: <the concrete things that are missing or wrong>",  # echoed template
    "VERDICT: DONE",
])
def test_unclear_answers_are_no_verdict(text: str) -> None:
    assert parse_answer(text) is None


def test_screen_takes_the_last_verdict_line_above_the_cli_chrome() -> None:
    screen = [
        "> You are the judge for agent Gia. ... (+30 lines)",
        "VERDICT: INCOMPLETE: <the concrete things that are missing or wrong>",
        "● I read the work itself.",
        "VERDICT: INCOMPLETE: the parser still drops comments",
        "────────",
        "❯ ",
        "────────",
        "  80% context left",
    ]
    assert parse_screen(screen) == Verdict(False, "the parser still drops comments")
    assert parse_screen(screen[:2]) is None
