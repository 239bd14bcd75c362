"""A screen goes to the views as the ScreenChanged event it stands for, built without the
model: the same event comes out of the views' decoder, for every kind of captured line."""

from __future__ import annotations

from swarm_tui.protocol.models import ScreenChanged, decode, encode, encode_screen

LINES = [
    "",
    "plain text",
    '"quoted" and \\ backslashed \\n not a newline',
    "\x1b[1;38;2;255;0;0mred bold\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07",
    "wide: 日本語 ✓ ⚠ 🦀, a tab\tand a bell \x07, nul \x00, del \x7f",
    "\u2028 line separator, \ufffd replaced",
    '{"event": "ended"} a line that looks like another event',
]


def test_a_screen_decodes_to_the_event_it_stands_for() -> None:
    for name in ("A001", "name with spaces", "ünïcode"):
        data = encode_screen(name, LINES)
        assert data.endswith(b"\n") and data.count(b"\n") == 1  # one event, one line
        event = decode(data)
        assert event == ScreenChanged(name=name, lines=LINES)
        assert event == decode(encode(ScreenChanged(name=name, lines=LINES)))
    assert decode(encode_screen("A", [])) == ScreenChanged(name="A", lines=[])
