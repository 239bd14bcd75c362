"""KeyReader: the mock agent's split of raw terminal input into text, pastes and keys."""

from __future__ import annotations

import pytest

from swarm_tui.agents.mock import PASTE_END, PASTE_START, KeyReader

Events = list[tuple[str, str]]


def feed_all(chunks: list[bytes]) -> Events:
    reader = KeyReader()
    events: Events = []
    for chunk in chunks:
        events += reader.feed(chunk)
    return events


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def texts(events: Events) -> str:
    """All typed text, however the reader chose to cut it into events."""
    assert all(kind == "text" for kind, _ in events), events
    return "".join(value for _, value in events)


# --------------------------------------------------------------------------------- text
def test_plain_text_then_enter() -> None:
    assert feed_all([b"hello world\r"]) == [("text", "hello world"), ("key", "enter")]


def test_tab_is_text() -> None:
    assert feed_all([b"a\tb"]) == [("text", "a\tb")]


def test_utf8_whole() -> None:
    assert feed_all(["café 日本 🐝".encode()]) == [("text", "café 日本 🐝")]


def test_utf8_split_between_reads() -> None:
    data = "café".encode()
    reader = KeyReader()
    assert reader.feed(data[:4]) == [("text", "caf")]  # half of é waits
    assert reader.feed(data[4:] + b"!") == [("text", "é!")]


@pytest.mark.parametrize("text", ["🐝", "日本語", "Poincaré — Ünïcödé"])
def test_utf8_byte_by_byte(text: str) -> None:
    assert texts(feed_all(bytewise(text.encode()))) == text


@pytest.mark.parametrize("data", [b"\xffabc", b"\xc3abc"])
def test_invalid_utf8_does_not_hold_back_later_text(data: bytes) -> None:
    assert "abc" in "".join(value for _, value in KeyReader().feed(data))


# --------------------------------------------------------------------------------- keys
@pytest.mark.parametrize(
    ("byte", "key"),
    [
        (b"\r", "enter"),
        (b"\n", "enter"),
        (b"\x7f", "backspace"),
        (b"\x08", "backspace"),
        (b"\x15", "ctrl-u"),
        (b"\x03", "ctrl-c"),
        (b"\x04", "ctrl-d"),
    ],
)
def test_control_keys(byte: bytes, key: str) -> None:
    assert feed_all([b"x" + byte + b"y"]) == [("text", "x"), ("key", key), ("text", "y")]


def test_other_c0_controls_are_dropped() -> None:
    assert feed_all([b"a\x01\x02\x05b"]) == [("text", "a"), ("text", "b")]


def test_lone_escape_is_esc() -> None:
    assert feed_all([b"\x1b"]) == [("key", "esc")]


def test_escape_then_text_is_esc_then_text() -> None:
    assert feed_all([b"\x1bq"]) == [("key", "esc"), ("text", "q")]


@pytest.mark.parametrize("seq", [b"\x1b[A", b"\x1b[1;5C", b"\x1b[3~", b"\x1b[?2004h"])
def test_csi_sequences_are_swallowed(seq: bytes) -> None:
    assert feed_all([b"a" + seq + b"b"]) == [("text", "a"), ("text", "b")]


# ------------------------------------------------------------------------------- pastes
def test_bracketed_paste_in_one_read() -> None:
    data = PASTE_START + b"line one\rline two\r\nthree" + PASTE_END + b"\r"
    assert feed_all([data]) == [("paste", "line one\nline two\nthree"), ("key", "enter")]


def test_paste_keeps_keys_and_escapes_inside_as_text() -> None:
    inner = b"a\x1b[31mb\x03c\x7fd\ttab"
    assert feed_all([PASTE_START + inner + PASTE_END]) == [("paste", inner.decode())]


def test_paste_split_across_reads_anywhere_but_right_after_its_esc() -> None:
    body = "first line\nsecond: café 🐝\nthird"
    data = b"x" + PASTE_START + body.encode() + PASTE_END + b"\r"
    expected = [("text", "x"), ("paste", body), ("key", "enter")]
    lone_esc = data.index(PASTE_START) + 1  # see test_esc_at_the_end_of_a_read_is_a_key
    for cut in range(1, len(data)):
        if cut != lone_esc:
            assert feed_all([data[:cut], data[cut:]]) == expected, cut


def test_esc_at_the_end_of_a_read_is_a_key() -> None:
    # no timeout: an ESC that ends a read is the Esc key at once, even if "[200~" follows
    events = feed_all([b"\x1b", b"[200~hi" + PASTE_END])
    assert events[0] == ("key", "esc")
    assert ("paste", "hi") not in events


def test_paste_body_and_closer_byte_by_byte() -> None:
    body = "step 1\nstep 2\n🐝 é\n"
    data = body.encode() + PASTE_END
    assert feed_all([PASTE_START, *bytewise(data)]) == [("paste", body)]


def test_paste_opener_split_waits_instead_of_dropping() -> None:
    reader = KeyReader()
    assert reader.feed(b"\x1b[20") == []
    assert reader.feed(b"0~hi" + PASTE_END) == [("paste", "hi")]


def test_paste_closer_split_waits() -> None:
    reader = KeyReader()
    assert reader.feed(PASTE_START + b"abc\x1b[2") == []
    assert reader.feed(b"01~") == [("paste", "abc")]


def test_an_end_marker_outside_a_paste_is_swallowed() -> None:
    # a stray ESC[201~ (what sanitize() strips from messages) must not end up as text
    assert feed_all([b"x" + PASTE_END + b"y"]) == [("text", "x"), ("text", "y")]


def test_two_pastes_in_one_read() -> None:
    data = PASTE_START + b"one" + PASTE_END + PASTE_START + b"two" + PASTE_END
    assert feed_all([data]) == [("paste", "one"), ("paste", "two")]


def test_large_paste_in_small_reads() -> None:
    body = "".join(f"line {i} ✓\n" for i in range(2000))
    data = PASTE_START + body.encode() + PASTE_END
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]
    assert feed_all(chunks) == [("paste", body)]
