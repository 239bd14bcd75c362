"""`plain()` strips every escape sequence a captured screen can hold, whatever its parameters
(issue 9, item 14): SGR with `:` sub-parameters, private modes, OSC 8 hyperlinks ended by ST
or BEL, and the short escapes; the text around them, `[` and `;` included, stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.agents.base import plain

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
ESC = "\x1b"


@pytest.mark.parametrize(
    ("captured", "text"),
    [
        # SGR, as tmux `capture-pane -e` and the CLIs write it
        (f"{ESC}[1;38;5;196mred{ESC}[0m", "red"),
        (f"{ESC}[38;2;10;20;30mrgb{ESC}[39m", "rgb"),
        (f"{ESC}[m plain", " plain"),
        # SGR with ':' sub-parameters (ITU T.416, kitty, VTE, foot, WezTerm)
        (f"{ESC}[4:3mcurly underline{ESC}[4:0m", "curly underline"),
        (f"{ESC}[58:2::255:0:0mred underline{ESC}[59m", "red underline"),
        (f"{ESC}[38:2::10:20:30mcolon rgb{ESC}[0m", "colon rgb"),
        (f"{ESC}[38:5:208mcolon 256{ESC}[0m", "colon 256"),
        (f"{ESC}[1;4:3;58:5:196mmixed{ESC}[0m", "mixed"),
        # private modes and other CSI
        (f"{ESC}[?2004hbracketed paste on{ESC}[?2004l", "bracketed paste on"),
        (f"{ESC}[?25l{ESC}[?1049h{ESC}[2J{ESC}[3;1Hscreen", "screen"),
        (f"{ESC}[>4;2m{ESC}[>1u{ESC}[=5ukeys", "keys"),
        (f"{ESC}[2 qcursor shape", "cursor shape"),  # DECSCUSR: an intermediate byte
        # OSC 8 hyperlinks, ended by ST (ESC \) and by BEL
        (
            f"see {ESC}]8;;https://example.com/a?b=1;c{ESC}\\the docs{ESC}]8;;{ESC}\\ now",
            "see the docs now",
        ),
        (f"{ESC}]8;id=7;file:///tmp/x.py\x07x.py{ESC}]8;;\x07:3", "x.py:3"),
        (f"{ESC}]0;window title\x07prompt", "prompt"),
        (f"{ESC}]133;A{ESC}\\$ ", "$ "),
        (f"cut here {ESC}]8;;https://example.com/unterminated", "cut here "),
        # string sequences and short escapes
        (f"{ESC}Ptmux;{ESC}{ESC}]52;c;aGk=\x07{ESC}\\after", "after"),
        (f"{ESC}(B{ESC})0{ESC}7{ESC}8{ESC}={ESC}>{ESC}Mshort", "short"),
        # the C1 forms
        ("\x9b1mC1 CSI\x9b0m", "C1 CSI"),
        ("\x9d8;;https://example.com\x9clink\x9d8;;\x9c", "link"),
        # text that only looks like parameters stays as it is
        ("a[1;2m] b; c:d [4:3m", "a[1;2m] b; c:d [4:3m"),
        ("✻ Worked for 6s · done", "✻ Worked for 6s · done"),
    ],
)
def test_plain_strips_the_sequence_and_keeps_the_text(captured: str, text: str) -> None:
    assert plain(captured) == text


@pytest.mark.parametrize("name", sorted(p.name for p in SCREENS.glob("*-ansi.txt")))
def test_captured_screens_have_no_escape_left(name: str) -> None:
    lines = (SCREENS / name).read_text(encoding="utf-8").splitlines()
    assert any(ESC in ln for ln in lines)
    stripped = [plain(ln) for ln in lines]
    assert not any(ESC in ln or "\x07" in ln for ln in stripped)
