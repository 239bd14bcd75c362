"""Git's unified diffs read into files, hunks and lines, and the review written from
comments on those lines. Pure: text in, data out (no Rich, no Textual).

Everything a diff holds comes from an agent's working tree, so every line is neutralised
before anything draws it: control characters (an escape sequence written into a file, a
carriage return, a bell) are written out as `less` and `cat -v` write them (`^[`, `^G`,
`<9B>`), tabs become spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal[" ", "+", "-", "\\"]  # context, added, removed, "\ No newline at end of file"
TAB = 4

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_QUOTED = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    '"': '"',
    "\\": "\\",
}


def _caret(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20 or code == 0x7F:
        return "^" + chr(code ^ 0x40)  # ^@ … ^_ (^[ for ESC), ^? for DEL
    return f"<{code:02X}>"  # a C1 control


def neutralise(text: str) -> str:
    """A line as it may be drawn: tabs expanded, every other control character written out
    (`^[`: never sent to the terminal), a line's closing carriage return dropped."""
    text = text.removesuffix("\r")
    if "\t" in text:
        text = text.expandtabs(TAB)
    return _CONTROLS.sub(_caret, text)


def unquote(path: str) -> str:
    """A path as git writes it: as is, or in double quotes with C escapes (octal bytes of
    UTF-8) when it holds a quote, a backslash or a control character."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path
    out = bytearray()
    body, i = path[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out += _QUOTED.get(nxt, nxt).encode()
            i += 2
            continue
        out += ch.encode()
        i += 1
    return out.decode(errors="replace")


def _side(path: str) -> str:
    """`a/x`, `b/x` or `/dev/null` (a header's path, unquoted) to `x` ("" for none)."""
    path = unquote(path.split("\t", 1)[0] if not path.startswith('"') else path)
    if path == "/dev/null":
        return ""
    return path[2:] if path[:2] in ("a/", "b/") else path


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a hunk: its kind, its text (neutralised, no prefix) and its numbers on
    each side (0 where it has none: an added line has no old number)."""

    kind: Kind
    text: str
    old: int = 0
    new: int = 0


@dataclass(slots=True)
class Hunk:
    header: str  # "@@ -1,5 +1,7 @@" (neutralised)
    section: str  # what git says follows @@ (a function's line), neutralised
    old_start: int
    new_start: int
    lines: list[Line] = field(default_factory=list)


@dataclass(slots=True)
class FilePatch:
    """One file's part of a diff."""

    path: str  # its name after the change (before it, for a deleted file)
    old_path: str = ""  # set when it was renamed or copied
    status: Literal["modified", "new", "deleted", "renamed", "copied"] = "modified"
    binary: bool = False
    mode: str = ""  # "old mode 100644 → 100755" when only that changed, else ""
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "+")

    @property
    def deleted(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "-")


def _git_names(rest: str) -> tuple[str, str]:
    """The two names on a `diff --git a/x b/x` line (the only names a binary file or a mode
    change has): quoted ones read as such, else the line cut in its middle when both halves
    name the same file, else at the last ` b/`."""
    if rest.startswith('"'):
        end = re.match(r'"(?:[^"\\]|\\.)*"', rest)
        if end:
            return _side(end.group()), _side(rest[end.end() :].strip())
    half = len(rest) // 2
    if rest[half : half + 1] == " " and rest[2:half] == rest[half + 3 :]:
        return _side(rest[:half]), _side(rest[half + 1 :])
    at = rest.rfind(" b/")
    return (_side(rest[:at]), _side(rest[at + 1 :])) if at > 0 else (_side(rest), _side(rest))


def parse(diff: str) -> list[FilePatch]:
    """Every file of a `git diff` (as git prints it; a diff cut short ends where it ends)."""
    files: list[FilePatch] = []
    patch: FilePatch | None = None
    hunk: Hunk | None = None
    old = new = left_old = left_new = 0  # the next numbers; the lines the hunk still has
    old_name = ""
    for raw in diff.split("\n"):
        if raw.startswith("diff --git "):
            old_name, new_name = _git_names(raw[len("diff --git ") :])
            patch = FilePatch(path=neutralise(new_name or old_name))
            files.append(patch)
            hunk = None
            continue
        if patch is None:
            continue
        if hunk is not None:
            kind = raw[:1]
            if kind == "\\":
                hunk.lines.append(Line("\\", neutralise(raw[1:].strip())))
                continue
            if kind == "+" and left_new > 0:
                hunk.lines.append(Line("+", neutralise(raw[1:]), 0, new))
                new, left_new = new + 1, left_new - 1
                continue
            if kind == "-" and left_old > 0:
                hunk.lines.append(Line("-", neutralise(raw[1:]), old, 0))
                old, left_old = old + 1, left_old - 1
                continue
            if kind == " " and left_old > 0 and left_new > 0:
                hunk.lines.append(Line(" ", neutralise(raw[1:]), old, new))
                old, new, left_old, left_new = old + 1, new + 1, left_old - 1, left_new - 1
                continue
            hunk = None  # it has all the lines its header counts
        if m := _HUNK.match(raw):
            old, new = int(m.group(1)), int(m.group(3))
            left_old = int(m.group(2)) if m.group(2) is not None else 1
            left_new = int(m.group(4)) if m.group(4) is not None else 1
            hunk = Hunk(neutralise(raw[: m.start(5)].rstrip()), neutralise(m.group(5)), old, new)
            patch.hunks.append(hunk)
            continue
        _header(patch, raw, old_name)
    return files


def _header(patch: FilePatch, raw: str, old_name: str) -> None:
    """One extended header line of a file's patch."""
    if raw.startswith("new file mode"):
        patch.status = "new"
    elif raw.startswith("deleted file mode"):
        patch.status = "deleted"
        patch.path = old_name or patch.path  # (`+++ /dev/null` follows)
    elif raw.startswith(("rename from ", "copy from ")):
        patch.status = "renamed" if raw.startswith("rename") else "copied"
        patch.old_path = unquote(raw.split(" from ", 1)[1])
    elif raw.startswith(("rename to ", "copy to ")):
        patch.path = unquote(raw.split(" to ", 1)[1])
    elif raw.startswith("old mode "):
        patch.mode = "mode " + raw.removeprefix("old mode ")
    elif raw.startswith("new mode ") and patch.mode:
        patch.mode += " → " + raw.removeprefix("new mode ")
    elif raw.startswith("Binary files ") or raw == "GIT binary patch":
        patch.binary = True
    elif raw.startswith("+++ ") and (name := _side(raw[4:])):
        patch.path = name
    elif raw.startswith("--- ") and patch.status == "deleted" and (name := _side(raw[4:])):
        patch.path = name
    else:
        return  # index, similarity and other lines change nothing shown
    patch.path, patch.old_path = neutralise(patch.path), neutralise(patch.old_path)


# ---------------------------------------------------------------------------- the review
@dataclass(frozen=True, slots=True, order=True)
class Anchor:
    """Where a comment is: a file and a line on one side of the change. Sorted by file, then
    line; `part` keeps a committed line apart from the same file's uncommitted one."""

    path: str
    line: int
    old: bool = False  # the line's number before the change (a removed line)
    part: str = "committed"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (" (old)" if self.old else "")


def anchor_of(patch: FilePatch, line: Line, part: str) -> Anchor | None:
    """A code line's anchor: its new number (added and context lines), else its old one."""
    if line.kind == "-":
        return Anchor(patch.path, line.old, True, part)
    if line.kind in (" ", "+"):
        return Anchor(patch.path, line.new, False, part)
    return None


REVIEW_HEAD = "Review of your change:"


def review_message(comments: dict[Anchor, str]) -> str:
    """All comments as one message: a first line, then `path:LINE: text` in file and line
    order (each comment on one line)."""
    lines = [REVIEW_HEAD]
    for anchor in sorted(comments):
        text = " ".join(comments[anchor].split())
        if text:
            lines.append(f"{anchor}: {text}")
    return "\n".join(lines)
