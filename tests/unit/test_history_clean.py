"""A capture's lines made into history: trailing blanks and colours dropped in one scan
(a long inner run of spaces once took a regular expression quadratic time, in the engine),
an escape sequence cut by the line's limit taken off, and the answer bounded by the bytes
it takes on the wire, not by its characters."""

from __future__ import annotations

import json

import pytest

from swarm_tui.fleet import history as history_module
from swarm_tui.fleet.history import clean, cut_escape, encoded_size, strip_trailing

WIDE = "a" + " " * 7990 + "b"  # one line: a regex anchored at `$` tries all 7,990 starts


@pytest.mark.timeout(20)  # generous: the old regex took about an hour for these
def test_long_inner_runs_of_spaces_are_kept_and_cleaned_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history_module, "MAX_BYTES", 64 * 1024 * 1024)  # keep them all
    ends = "b" + " " * 900 + "\x1b[0m \t"  # within MAX_LINE with the run before it
    raw = [WIDE.encode()] * 1000 + [(WIDE[:7000] + ends).encode()] * 1000
    lines, cut = clean(raw, 10_000)
    assert not cut
    # the inner run is text; the trailing one goes
    assert lines == [WIDE] * 1000 + [WIDE[:7000] + "b"] * 1000
    assert strip_trailing("x" + " " * 7000 + "\x1b[31m" + " " * 990) == "x"
    assert cut_escape("\x1b" * 8000 + "a") == "\x1b" * 8000 + "a"  # letters after: whole


def test_what_ends_a_line_and_shows_nothing_is_dropped() -> None:
    assert strip_trailing("done \x1b[0m  \x1b[m\t ") == "done"
    assert strip_trailing("\x1b[1;38;2;1:2:3mred\x1b[0m   ") == "\x1b[1;38;2;1:2:3mred"
    assert strip_trailing("alarm") == "alarm"  # an m that is a letter of the text
    assert strip_trailing("at 5m") == "at 5m"
    assert strip_trailing("[0m") == "[0m"  # no ESC: text
    assert strip_trailing("   ") == ""
    assert strip_trailing("") == ""


def test_an_escape_sequence_cut_by_the_line_limit_is_taken_off() -> None:
    assert cut_escape("text \x1b[38;2;10;2") == "text "
    assert cut_escape("text \x1b[31mred\x1b[0") == "text \x1b[31mred"
    assert cut_escape("text \x1b[31mred") == "text \x1b[31mred"
    long = "y" * (history_module.MAX_LINE - 3) + "\x1b[38;5;200m" + "z" * 100
    (line,), _ = clean([long.encode()], 10)
    assert line == "y" * (history_module.MAX_LINE - 3) + "\x1b[0m…"


def test_the_answer_is_bounded_by_its_encoded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """ESC and non-ASCII characters are six bytes each in the JSON the socket sends: a
    bound on characters let a reply grow six times past it (and past the client's limit)."""
    monkeypatch.setattr(history_module, "MAX_BYTES", 10_000)
    raw = [f"\x1b[31m{i:04d} ─ ✓ é\x1b[0m{'─' * 40}".encode() for i in range(2000)]
    lines, cut = clean(raw, 10_000)
    assert cut and lines
    sent = len(json.dumps(lines))
    assert sent <= 10_000 + 2, sent
    assert sum(encoded_size(ln) for ln in lines) <= 10_000
    assert lines[-1].startswith("\x1b[31m1999 ")  # the newest lines are the ones kept
    assert 10_000 - encoded_size(lines[0]) < sent  # and as many as fit


def test_the_blank_rows_that_end_the_history_above_the_screen_are_dropped() -> None:
    """Blank rows just above the screen are a full-screen CLI's padding that a shorter
    window pushed up; blank rows elsewhere in the history, and the screen's own, are kept."""
    history = [b"older", b"", b"paragraph", b"   ", b"\x1b[0m  \x1b[m", b""]
    screen = [b"header", b"", b"\x1b[1mbox\x1b[0m", b"", b""]
    lines, cut = clean(history + screen, 100, screen=len(screen))
    assert not cut
    assert lines == ["older", "", "paragraph", "header", "", "\x1b[1mbox"]
    # not known, or more than there is: nothing but the end's blanks goes
    assert clean(history + screen, 100)[0] == [
        "older",
        "",
        "paragraph",
        "",
        "",
        "",
        "header",
        "",
        "\x1b[1mbox",
    ]
    assert clean(history + screen, 100, screen=99)[0] == clean(history + screen, 100)[0]
    # a history that is all blank rows above the screen: only the screen is left
    assert clean([b"", b" "] + screen, 100, screen=len(screen))[0] == ["header", "", "\x1b[1mbox"]
