"""Command builders for the control channel: quote(), sanitize(), send_keys_hex().

The round-trip tests pipe quoted text through a real `tmux -C` on a private socket and read
back what tmux stored (save-buffer writes a buffer's exact bytes to a file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.tmux.commands import line, quote, sanitize, send_keys_hex
from swarm_tui.tmux.protocol import ControlParser, Reply

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")


# --------------------------------------------------------------------------------- quote
@pytest.mark.parametrize(
    "token", ["abc", "window-1", "%3", "@2", "=fleet", "a.b/c,d+e:f", "X_1", "0", "=demo:"]
)
def test_plain_tokens_pass_through(token: str) -> None:
    assert quote(token) == token


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [
        ("", '""'),
        ("a b", '"a b"'),
        ("-n", '"-n"'),
        ("a;", '"a\\073"'),
        ('say "hi"', '"say \\042hi\\042"'),
        ("#{pane_id}", '"\\043\\173pane_id\\175"'),
        ("$(id)", '"\\044(id)"'),
        ("~", '"\\176"'),
        ("a\\b", '"a\\134b"'),
        ("\t\n", '"\\011\\012"'),
        ("é", '"\\303\\251"'),
        ("it's", '"it\'s"'),
    ],
)
def test_other_arguments_are_double_quoted_with_octal_escapes(arg: str, quoted: str) -> None:
    assert quote(arg) == quoted


def test_quoted_argument_holds_only_safe_characters() -> None:
    nasty = "".join(chr(i) for i in range(1, 128)) + "é日🐝"
    q = quote(nasty)
    assert q[0] == q[-1] == '"'
    body = q[1:-1]
    assert body.isascii()
    for risky in ';$#{}~"\\\n\r\t\x1b':
        # each risky character appears only as the lead of an octal escape (the backslash)
        assert risky == "\\" or risky not in body
    assert all(len(part) >= 3 and part[:3].isdigit() for part in body.split("\\")[1:])


def test_line_joins_quoted_arguments() -> None:
    assert line("set-buffer", "-b", "x", "hello world") == 'set-buffer "-b" x "hello world"'


# ------------------------------------------------------------------------------ sanitize
def test_sanitize_strips_escape_sequences_introducer() -> None:
    assert sanitize("a\x1b[201~b") == "a[201~b"
    assert sanitize("\x1b]0;title\x07x") == "]0;titlex"


def test_sanitize_strips_c0_controls_but_keeps_tab_and_newline() -> None:
    controls = "".join(chr(i) for i in range(0x20))
    assert sanitize(controls) == "\t\n\n"  # \t, \n and the \r that became \n
    assert sanitize("a\x00b\x03c\x04d\x08e") == "abcde"
    assert sanitize("col1\tcol2\nrow2") == "col1\tcol2\nrow2"


def test_sanitize_turns_crlf_and_cr_into_lf() -> None:
    assert sanitize("one\r\ntwo\r\n") == "one\ntwo\n"
    assert sanitize("one\rtwo") == "one\ntwo"


def test_sanitize_removes_del_keeps_non_ascii() -> None:
    assert sanitize("x\x7fy") == "xy"
    assert sanitize("café 日本 🐝 — Poincaré") == "café 日本 🐝 — Poincaré"
    assert sanitize("\u200b\u00a0") == "\u200b\u00a0"  # zero-width and no-break space stay


def test_sanitize_removes_c1_controls() -> None:
    c1 = "".join(chr(i) for i in range(0x80, 0xA0))
    assert sanitize(f"a{c1}b") == "ab"
    assert sanitize("\u009b31mred\u009d0;t\u009c") == "31mred0;t"  # C1 CSI, OSC, ST


# ------------------------------------------------------------------------- send_keys_hex
def test_send_keys_hex_chunks_and_encodes_every_byte() -> None:
    data = bytes(range(256)) * 4 + b"tail"  # 1028 bytes
    lines = send_keys_hex("%3", data, chunk=512)
    assert len(lines) == 3
    decoded = b""
    for ln in lines:
        head, _, hexes = ln.partition(" -H ")
        assert head == "send-keys -t %3"
        parts = hexes.split(" ")
        assert all(len(p) == 2 for p in parts)
        decoded += bytes(int(p, 16) for p in parts)
    assert decoded == data
    assert [len(ln.partition(" -H ")[2].split(" ")) for ln in lines] == [512, 512, 4]


def test_send_keys_hex_quotes_the_target_and_handles_empty_data() -> None:
    assert send_keys_hex("=my fleet:1", b"a") == ['send-keys -t "=my fleet:1" -H 61']
    assert send_keys_hex("%1", b"") == []


# ------------------------------------------------------------------ real tmux round trip
NASTY = [
    "-n",
    "--",
    "-t =other",
    "trailing;",
    ";",
    "a ; kill-server",
    "\\;",
    '"double"',
    "'single'",
    "mixed \"' quotes",
    "$(touch /tmp/pwned)",
    "$HOME ${HOME}",
    "`id`",
    "#{pane_id} #{session_name}",
    "# not a comment",
    "{ braces }",
    "Enter",
    "C-c",
    "Escape",
    "~",
    "~/x",
    "back\\slash \\n \\033 \\134",
    "\\",
    "tab\there",
    "line1\nline2",
    "\n",
    "trailing newline\n",
    "windows\r\nline",
    "café 日本語 🐝 — Ünïcödé",
    "%3",
    "@1",
    "=x",
    "X=1",
    "".join(chr(i) for i in range(1, 128)),
    "a" * 20_000,
    ("mixed -; $(x) #{y} ~ \\ \" ' \t\n é 🐝 " * 700)[:20_000],
]

# Plain-looking tokens that start with '%' but are not all digits: tmux's lexer reads them
# as a %if / %hidden / ... condition keyword and fails with "parse error: syntax error".
PERCENT_WORDS = ["%done", "%3:continue", "%1.0", "%if", "%hidden"]


class Tmux:
    """A private tmux server and one control client, torn down by the fixture."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.sock = f"swarm-unit-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", "rt", "-x", "80", "-y", "24", "sleep 100000")

    def run(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.sock, "-f", "/dev/null", *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout

    def control(self, lines: list[str]) -> list[Reply]:
        """Run command lines down a fresh `tmux -C` client; return their replies."""
        proc = subprocess.Popen(
            [
                "tmux",
                "-L",
                self.sock,
                "-f",
                "/dev/null",
                "-u",
                "-C",
                "attach-session",
                "-t",
                "=rt",
                "-f",
                "ignore-size",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        assert proc.stdin and proc.stdout
        parser = ControlParser()
        replies: list[Reply] = []
        # wait for the attach's own block: commands sent earlier may run before attach
        while not replies:
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, "tmux -C exited before attaching"
            replies += [e for e in parser.feed(chunk) if isinstance(e, Reply)]
        out, _ = proc.communicate(("\n".join(lines) + "\ndetach-client\n").encode(), timeout=20)
        replies += [e for e in parser.feed(out) if isinstance(e, Reply)]
        assert replies[0].from_client is False
        assert len(replies) == len(lines) + 2, "one reply per command, plus attach and detach"
        return replies[1:-1]

    def store_and_read(self, values: list[str]) -> list[tuple[Reply, bytes | None]]:
        """set-buffer each value exactly as the injector does, then save it to a file."""
        lines = []
        for i, value in enumerate(values):
            lines.append(f"set-buffer -b rt{i} -- {quote(value)}")
            lines.append(f"save-buffer -b rt{i} {self.tmp / f'{i}.out'}")
        replies = self.control(lines)
        assert len(replies) == 2 * len(values)
        out = []
        for i in range(len(values)):
            path = self.tmp / f"{i}.out"
            out.append((replies[2 * i], path.read_bytes() if path.exists() else None))
        return out

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)
        tmpdir = os.environ.get("TMUX_TMPDIR", "/tmp")
        Path(tmpdir, f"tmux-{os.getuid()}", self.sock).unlink(missing_ok=True)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(tmp_path)
    try:
        yield t
    finally:
        t.kill()


@needs_tmux
def test_nasty_strings_survive_tmux_exactly(tmux: Tmux) -> None:
    results = tmux.store_and_read(NASTY)
    for value, (reply, stored) in zip(NASTY, results, strict=True):
        assert reply.ok, f"{value[:40]!r}: tmux said {reply.text()!r}"
        assert stored == value.encode("utf-8"), f"{value[:40]!r} came back as {stored!r:.80}"
    assert not Path("/tmp/pwned").exists()
    # the `; kill-server` inside the text did not run: the server still answers
    assert tmux.run("display-message", "-p", "#{session_name}").strip() == "rt"


@needs_tmux
@pytest.mark.parametrize("value", PERCENT_WORDS)
def test_percent_words_survive_tmux(tmux: Tmux, value: str) -> None:
    ((reply, stored),) = tmux.store_and_read([value])
    assert reply.ok, reply.text()
    assert stored == value.encode()


@needs_tmux
def test_continue_command_for_a_paused_pane_parses(tmux: Tmux) -> None:
    """The exact line engine.py sends after a %pause must at least get past tmux's parser."""
    pane = tmux.run("list-panes", "-t", "=rt", "-F", "#{pane_id}").strip()
    assert pane.startswith("%")
    (reply,) = tmux.control([f"refresh-client -A {quote(pane + ':continue')}"])
    assert reply.ok, reply.text()


@needs_tmux
def test_send_keys_hex_types_bytes_exactly(tmux: Tmux) -> None:
    out = tmux.tmp / "typed.bin"
    data = ("héllo 🐝 -n ; $(x) #{y} ~ \\ \" ' \t\r\x1b[201~ end " * 40).encode()
    assert len(data) > 1024  # more than one chunk
    ready, done = f"ready-{tmux.sock}", f"done-{tmux.sock}"
    # raw mode: no echo, no line discipline, so head writes exactly the bytes it is sent;
    # tmux wait-for channels say when the pane listens and when it has every byte
    script = (
        f"stty raw -echo && tmux -L {tmux.sock} wait-for -S {ready} && "
        f"head -c {len(data)} > {out} && tmux -L {tmux.sock} wait-for -S {done}"
    )
    tmux.run("new-window", "-d", "-n", "typed", script)
    tmux.run("wait-for", ready)
    pane = tmux.run("display-message", "-p", "-t", "=rt:typed", "#{pane_id}").strip()
    replies = tmux.control(send_keys_hex(pane, data))
    assert len(replies) == -(-len(data) // 512) and all(r.ok for r in replies)
    tmux.run("wait-for", done)
    assert out.read_bytes() == data
