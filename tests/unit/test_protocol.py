"""ControlParser against raw control-mode output captured from tmux 3.3a.

The fixtures in tests/fixtures/control/ are the byte-for-byte stdout of `tmux -C attach`
clients (regenerate with tests/fixtures/control/capture_control.py):

- basic.bin: plain `%output`, replies whose lines start with `%`, `%error`, capture-pane of a
  screen that prints fake control lines, `dead` subscription changes, window closes, `%exit`
  after kill-server.
- paused.bin: attached with pause-after: `%extended-output`, `%pause`, continue, detach.
- tricky.bin: a capture-pane reply holding lines such as `%end of the story`.
- linked.bin: `%window-close` (one of a window's two links removed), then the kill.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from swarm_tui.tmux.protocol import (
    ControlParser,
    Event,
    Exit,
    Notification,
    Output,
    Pause,
    Reply,
    SubscriptionChanged,
    WindowClose,
    unescape,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "control"
ALL = ["basic.bin", "paused.bin", "linked.bin"]

PRINTER = ("café 日本 🐝\r\nback\\slash\ttab \x1b[1mbold\x1b[0m bel\x07\r\nMARK-DONE\r\n").encode()


def raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def parse(data: bytes, sizes: list[int] | None = None) -> list[Event]:
    """All events of `data`, fed in chunks of the given sizes (one chunk if None)."""
    parser = ControlParser()
    if sizes is None:
        return list(parser.feed(data))
    events: list[Event] = []
    pos = 0
    for size in sizes:
        events += parser.feed(data[pos : pos + size])
        pos += size
    events += parser.feed(data[pos:])
    return events


def of(events: list[Event], kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


@pytest.fixture(scope="module")
def basic() -> list[Event]:
    return parse(raw("basic.bin"))


@pytest.fixture(scope="module")
def paused() -> list[Event]:
    return parse(raw("paused.bin"))


# ------------------------------------------------------------------------------ replies
def test_attach_block_is_not_from_this_client(basic: list[Event]) -> None:
    replies = of(basic, Reply)
    assert isinstance(basic[0], Reply)
    assert basic[0].from_client is False and basic[0].ok and basic[0].lines == ()
    assert all(r.from_client for r in replies[1:])


def test_reply_numbers_rise_in_command_order(basic: list[Event]) -> None:
    numbers = [r.number for r in of(basic, Reply)]
    assert len(numbers) == 14
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


def test_new_window_reply_carries_the_format(basic: list[Event]) -> None:
    replies = of(basic, Reply)
    assert replies[1].lines == (b"@2 %2",)
    assert replies[2].lines == (b"@3 %3",)
    assert replies[1].text() == "@2 %2"


def test_reply_lines_may_start_with_percent(basic: list[Event]) -> None:
    list_panes = of(basic, Reply)[3]
    assert list_panes.ok
    assert list_panes.lines == (b"%0 @0 0", b"%2 @2 0", b"%3 @3 0")
    # and none of them leaked out as a notification
    assert not [e for e in basic if isinstance(e, Notification) and e.name in ("0", "2", "3")]


def test_error_block(basic: list[Event]) -> None:
    error = of(basic, Reply)[4]
    assert error.ok is False
    assert error.from_client
    assert error.text() == "parse error: unknown command: no-such-command"
    assert [r.ok for r in of(basic, Reply)].count(False) == 1


def test_capture_pane_reply_keeps_escapes_and_utf8(basic: list[Event]) -> None:
    capture = of(basic, Reply)[5]
    assert capture.lines[0].decode() == "café 日本 🐝"
    assert capture.lines[1] == b"back\\slash      tab \x1b[1mbold\x1b[0m\x1b[39m\x1b[49m bel"
    assert capture.lines[2] == b"MARK-DONE"
    assert len(capture.lines) == 24  # the whole 80x24 screen, blank rows included
    assert capture.text().splitlines()[0] == "café 日本 🐝"


def test_screen_lines_that_look_like_control_lines_stay_in_the_block(
    basic: list[Event],
) -> None:
    capture = of(basic, Reply)[6]
    assert capture.ok
    assert capture.lines[:5] == (
        b"%end 1 2 1",
        b"%error 3 4 1",
        b"%begin 5 6 1",
        b"%output %9 fake",
        b"LIAR-DONE",
    )
    assert len(capture.lines) == 24
    assert "%9" not in {o.pane for o in of(basic, Output)}


def test_screen_line_starting_with_end_and_words_does_not_crash() -> None:
    events = parse(raw("tricky.bin"))
    replies = of(events, Reply)
    assert replies[2].lines[:6] == (
        b"%end of the story",
        b"%error at line 3",
        b"%begin",
        b"%exit now",
        b"%end",
        b"TRICK-DONE",
    )
    assert replies[3].lines == (b"after the trick",)
    assert of(events, Exit) == [Exit("")]


def test_partial_tricky_stream_parses_up_to_the_lying_screen() -> None:
    # Everything before the capture-pane reply parses, including the escaped %output copy
    # of the same lines (escaping keeps them on one line).
    data = raw("tricky.bin")
    head = data[: data.index(b"%begin", data.index(b"TRICK-DONE"))]
    events = parse(head)
    (out,) = of(events, Output)
    assert out.pane == "%1"
    assert out.data == (
        b"%end of the story\r\n%error at line 3\r\n%begin\r\n%exit now\r\n%end\r\nTRICK-DONE\r\n"
    )
    assert of(events, Exit) == []


# ------------------------------------------------------------------------------- output
def test_output_is_unescaped_to_the_bytes_the_pane_wrote(basic: list[Event]) -> None:
    outputs = [(o.pane, o.data) for o in of(basic, Output)]
    assert outputs[0] == ("%2", PRINTER)
    assert outputs[1] == (
        "%3",
        b"%end 1 2 1\r\n%error 3 4 1\r\n%begin 5 6 1\r\n%output %9 fake\r\nLIAR-DONE\r\n",
    )
    assert outputs[2] == ("%2", b"\r\n")
    assert len(outputs) == 3


def test_extended_output_is_unescaped(paused: list[Event]) -> None:
    outputs = [(o.pane, o.data) for o in of(paused, Output)]
    assert outputs[0] == ("%1", "café back\\slash\r\r\nEXT-DONE\r\n".encode())
    assert outputs[1] == ("%2", b"tick\r\n")


def test_unescape_octal() -> None:
    assert unescape(b"\\134") == b"\\"
    assert unescape(b"a\\015\\012b") == b"a\r\nb"
    assert unescape(b"\\033[1m") == b"\x1b[1m"
    # an escaped backslash followed by digits is a backslash and the digits, not a byte
    assert unescape(b"\\134015") == b"\\015"
    assert unescape(b"\\134\\134") == b"\\\\"
    # raw bytes >= 0x20 (UTF-8 included) pass through
    assert unescape("日本 \\ 9".encode()) == "日本 \\ 9".encode()


def test_utf8_split_across_output_lines_keeps_bytes() -> None:
    # tmux may cut a pane's output between the bytes of one character: the parser must hand
    # over bytes, so joining the two events' data restores the character.
    bee = "🐝".encode()
    events = parse(b"%output %1 x" + bee[:2] + b"\n%output %1 " + bee[2:] + b"y\\015\\012\n")
    assert [type(e) for e in events] == [Output, Output]
    assert b"".join(e.data for e in events).decode() == "x🐝y\r\n"  # type: ignore[union-attr]


def test_output_with_no_data() -> None:
    assert parse(b"%output %7 \n") == [Output("%7", b"")]
    assert parse(b"%extended-output %7 0 : \n") == [Output("%7", b"")]


def test_extended_output_data_may_hold_space_colon_space() -> None:
    (event,) = parse(b"%extended-output %4 12 : a : b\\015\\012\n")
    assert isinstance(event, Output)
    assert (event.pane, event.data) == ("%4", b"a : b\r\n")


# ------------------------------------------------------------------------ notifications
def test_pause_and_continue(paused: list[Event]) -> None:
    assert of(paused, Pause) == [Pause("%2")]
    pause_at = paused.index(Pause("%2"))
    # tmux 3.3a writes `%continue` inside the refresh-client -A reply block
    reply = paused[pause_at + 1]
    assert isinstance(reply, Reply) and reply.ok and reply.lines == (b"%continue %2",)
    # and the pane's output flows again after it
    assert paused[pause_at + 2] == Output("%2", b"tick\\015\\012")


def test_subscription_changes(basic: list[Event]) -> None:
    subs = of(basic, SubscriptionChanged)
    assert subs == [
        SubscriptionChanged("dead", "@0", "%0", "0"),
        SubscriptionChanged("dead", "@2", "%2", "0"),
        SubscriptionChanged("dead", "@3", "%3", "0"),
        SubscriptionChanged("dead", "@2", "%2", "1"),  # the printer exited
        SubscriptionChanged("dead", "@2", "%2", "0"),  # respawn-pane -k
    ]


def test_window_close_and_unlinked_window_close(basic: list[Event], paused: list[Event]) -> None:
    # tmux 3.3a reports even a window of the attached session as unlinked-window-close
    assert b"%unlinked-window-close @3" in raw("basic.bin")
    assert of(basic, WindowClose) == [WindowClose("@3"), WindowClose("@4")]
    assert of(paused, WindowClose) == [WindowClose("@2")]


def test_window_close_of_a_still_linked_window() -> None:
    # tmux 3.3a says %window-close only while the window is still in the session (here one
    # of its two links went); killing it then says %unlinked-window-close. Both are closes.
    data = raw("linked.bin")
    assert b"\n%window-close @1\n" in data and b"\n%unlinked-window-close @1\n" in data
    events = parse(data)
    assert of(events, WindowClose) == [WindowClose("@1"), WindowClose("@1")]
    assert events[-1] == Exit("")
    assert [r.ok for r in of(events, Reply)] == [True] * 6


def test_exit_after_kill_server_and_after_detach(basic: list[Event], paused: list[Event]) -> None:
    assert basic[-1] == Exit("")
    assert paused[-1] == Exit("")
    assert of(basic, Exit) == [Exit("")]


def test_exit_with_reason() -> None:
    assert parse(b"%exit too far behind\n") == [Exit("too far behind")]


def test_other_notifications_keep_name_and_args(basic: list[Event]) -> None:
    notes = of(basic, Notification)
    assert notes[0] == Notification("session-changed", ("$0", "fx"))
    assert Notification("window-add", ("@2",)) in notes
    assert Notification("unlinked-window-add", ("@4",)) in notes
    assert notes[-1] == Notification("sessions-changed", ())


def test_lines_outside_blocks_that_are_not_notifications_are_dropped() -> None:
    assert parse(b"garbage\n\n%window-add @9\n") == [Notification("window-add", ("@9",))]


# ------------------------------------------------------------------------------ chunking
@pytest.mark.parametrize("name", ALL)
def test_feeding_byte_by_byte_gives_the_same_events(name: str) -> None:
    data = raw(name)
    assert parse(data, [1] * len(data)) == parse(data)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("seed", range(5))
def test_feeding_random_chunks_gives_the_same_events(name: str, seed: int) -> None:
    data = raw(name)
    rng = random.Random(seed)
    sizes: list[int] = []
    while sum(sizes) < len(data):
        sizes.append(rng.randint(1, 300))
    assert parse(data, sizes) == parse(data)


def test_utf8_character_split_between_feeds() -> None:
    data = raw("basic.bin")
    cut = data.index("🐝".encode()) + 2  # inside the 4-byte character
    events = parse(data, [cut])
    assert of(events, Output)[0].data == PRINTER


def test_incomplete_line_waits_for_its_newline() -> None:
    parser = ControlParser()
    assert list(parser.feed(b"%output %1 ab")) == []
    assert list(parser.feed(b"c\\015")) == []
    assert list(parser.feed(b"\\012\n%pa")) == [Output("%1", b"abc\\015\\012")]
    assert list(parser.feed(b"use %1\n")) == [Pause("%1")]


def test_reply_split_across_feeds() -> None:
    parser = ControlParser()
    assert list(parser.feed(b"%begin 1 7 1\n%0 @0 0\n%end 1 ")) == []
    assert list(parser.feed(b"7 1\n")) == [Reply(7, True, (b"%0 @0 0",), True)]
