"""Verdicts are parsed strictly; anything unclear is no verdict, never a pass."""

from __future__ import annotations

import pytest

from swarm_tui.fleet.verdict import Verdict, parse_answer, parse_screen


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I read it all.\nVERDICT: COMPLETE", Verdict(True, "")),
        ("VERDICT: INCOMPLETE: tests fail; no docs", Verdict(False, "tests fail; no docs")),
        ("**VERDICT: COMPLETE**", Verdict(True, "")),
        ("`VERDICT: INCOMPLETE: x`\n\n", Verdict(False, "x")),
        ("VERDICT: INCOMPLETE", Verdict(False, "the judge gave no reasons")),
        ('{"type":"result","result":"ok\\nVERDICT: COMPLETE"}', Verdict(True, "")),
    ],
)
def test_clear_verdicts(text: str, expected: Verdict) -> None:
    assert parse_answer(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Looks good to me.",
        "VERDICT: COMPLETE\nActually, wait: the tests were never run.",  # not the last line
        "VERDICT: COMPLETE: mostly",  # a hedge is not a verdict
        "verdict: complete",
        "VERDICT: COMPLETE?",
        "Final VERDICT: COMPLETE",
        "VERDICT: INCOMPLETE: <the concrete things that are missing or wrong>",  # echoed template
        "VERDICT: DONE",
    ],
)
def test_unclear_answers_are_no_verdict(text: str) -> None:
    assert parse_answer(text) is None


def test_screen_takes_this_reviews_verdict_line_above_the_cli_chrome() -> None:
    screen = [
        "> You are the judge for agent Gia. ... (+30 lines)",
        "VERDICT <review number>: INCOMPLETE: <the concrete things that are missing>",
        "● I read the work itself.",
        "VERDICT R-00aa11: INCOMPLETE: the parser still drops comments",
        "────────",
        "❯ ",
        "────────",
        "  80% context left",
    ]
    assert parse_screen(screen, "R-00aa11") == Verdict(False, "the parser still drops comments")
    assert parse_screen(screen[:2], "R-00aa11") is None
    assert parse_screen(screen, "R-ffffff") is None  # another review's answer


def _judge_prompt(review: str) -> str:
    from swarm_tui.config.skills import skill_text

    return skill_text(
        "judge",
        {
            "review": review,
            "agent": "Gia",
            "spec": "Port the parser",
            "verify": "(none)",
            "verify_result": "(no verify command)",
            "claim": "VERDICT: COMPLETE",
            "screen": "all green",
        },
    )


def test_an_echoed_prompt_and_an_ack_are_no_verdict() -> None:
    """What a Codex judge showed: the whole pasted review prompt (template lines included),
    then an answer that is not a verdict. Old-style template lines must not count either."""
    review = "R-3f9c01"
    prompt = _judge_prompt(review)
    echoed = ["› " + ln if i == 0 else "  " + ln for i, ln in enumerate(prompt.splitlines())]
    screen = [
        *echoed,
        "  VERDICT: COMPLETE",
        "",
        "• ACK: received 3268 chars.",
        "",
        "› ",
        "",
        "  gpt-5 default · 97% context left",
    ]
    assert parse_screen(screen, review, prompt) is None


def test_a_line_of_what_the_judge_was_sent_never_counts() -> None:
    """Even with this review's number on it (an echoed re-ask wrapped at the wrong place)."""
    review = "R-3f9c01"
    sent = f"End with `VERDICT {review}: COMPLETE` or the incomplete form."
    screen = ["› End with `", f"VERDICT {review}: COMPLETE`", "  or the incomplete form."]
    assert parse_screen(screen, review, sent) is None
    answer = [*screen, "● Read it all.", f"VERDICT {review}: INCOMPLETE: no tests"]
    assert parse_screen(answer, review, sent) == Verdict(False, "no tests")


def test_a_headless_answer_may_omit_the_number_but_not_give_another() -> None:
    assert parse_answer("ok\nVERDICT R-3f9c01: COMPLETE", "R-3f9c01") == Verdict(True, "")
    assert parse_answer("ok\nVERDICT: COMPLETE", "R-3f9c01") == Verdict(True, "")
    assert parse_answer("ok\nVERDICT R-000000: COMPLETE", "R-3f9c01") is None
