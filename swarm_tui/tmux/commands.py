"""Build tmux command lines for the control channel without ever trusting the text.

Control-mode lines go through tmux's own command parser, not a shell. Arguments that are not
plain tokens are double-quoted with every risky byte written as an octal escape, so newlines,
`;`, `$`, `#{` and quotes all arrive as written. A value that may start with `-` still needs
`--` before it, as with any tmux command (quoting does not stop flag parsing).
"""

from __future__ import annotations

import re

# `%word` unquoted is a tmux keyword (%if ...): only a bare pane id like %12 may go plain
_PLAIN = re.compile(r"^(?:%\d+|[A-Za-z0-9_@=./,+:][A-Za-z0-9_%@=./,+:-]*)$")
_SAFE_BYTES = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:/=+@%()[]!?*&^'<>|`"
)


def quote(arg: str) -> str:
    """One tmux command-line argument holding exactly `arg`."""
    if arg and _PLAIN.match(arg):
        return arg
    out = []
    for b in arg.encode("utf-8"):
        out.append(chr(b) if b in _SAFE_BYTES else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def line(*args: str) -> str:
    """A whole command line: the command name then quoted arguments."""
    return " ".join(quote(a) for a in args)


# Control characters that must never reach an agent as keys: every C0 byte and DEL except
# tab and newline (an ESC would end a bracketed paste early or arrive as a key sequence), and
# the C1 controls U+0080-U+009F (U+009B is CSI, U+009D OSC to a terminal that takes them).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize(text: str) -> str:
    """Message text as it may be typed into an agent: CRLF and CR to LF, C0 and C1 controls
    and DEL removed, tab and newline kept."""
    text = _SURROGATES.sub("\ufffd", text)  # not Unicode at all: cannot be typed or stored
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def send_keys_hex(target: str, data: bytes, chunk: int = 512) -> list[str]:
    """`send-keys -H` lines that type `data` byte for byte (no key-name lookup at all)."""
    lines = []
    for i in range(0, len(data), chunk):
        part = data[i : i + chunk]
        lines.append(f"send-keys -t {quote(target)} -H " + " ".join(f"{b:02x}" for b in part))
    return lines
