"""An agent's change as the diff view's rows, and each row as styled text.

A `Document` lays a `DiffView` out once: the files with their counts (committed, then
uncommitted), then each part's patches, file by file and hunk by hunk; comments are rows put
under their lines. A `Painter` styles a row when it comes into sight: code is highlighted by
Pygments (through Rich's `Syntax`, the lexer chosen from the file's name) in chunks of a
hunk, each side of the change apart (the old lines with the old, the new with the new), and
only the chunks on screen are ever highlighted, so a diff of 20,000 lines opens at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rich.cells import cell_len
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text

from swarm_tui.protocol.models import DiffFileView, DiffView
from swarm_tui.ui.diffparse import Anchor, FilePatch, Line, anchor_of, neutralise, parse

RowKind = Literal[
    "section", "commit", "entry", "blank", "file", "hunk", "code", "marker", "comment", "note"
]
PARTS = {"committed": "Committed", "uncommitted": "Uncommitted (working tree)"}
CHUNK = 200  # a hunk's lines highlighted together
CHUNKS_KEPT = 256


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the view. Code rows point at their line (`file`, `hunk`, `line`) and say
    where a comment on them goes (`anchor`); a comment row carries its comment's anchor."""

    kind: RowKind
    text: str = ""
    file: int = -1  # index into Document.files
    hunk: int = -1
    line: int = -1
    anchor: Anchor | None = None


@dataclass(frozen=True, slots=True)
class FileItem:
    part: str
    patch: FilePatch


@dataclass(frozen=True, slots=True)
class Place:
    """Where the cursor is, in terms that outlive a new reading of the change: its line's
    anchor, else its file (part and path) and which of the file's rows of its kind it is,
    else only its row's index."""

    index: int
    kind: RowKind = "blank"
    anchor: Anchor | None = None
    part: str = ""
    path: str = ""
    nth: int = 0  # the file's nth row of this kind (its hunks' headers, its markers)


def counts(added: int, deleted: int) -> str:
    return " ".join(
        p for p in (f"+{added}" if added else "", f"−{deleted}" if deleted else "") if p
    )


def what_it_is(info: DiffFileView | None, patch: FilePatch | None) -> str:
    """`binary, new`, `renamed from x`, `deleted`: what a count does not say."""
    words = []
    if (info and info.binary) or (patch and patch.binary):
        words.append("binary")
    status = patch.status if patch else ("renamed" if info and info.old_path else "modified")
    old = (patch.old_path if patch else "") or (info.old_path if info else "")
    if status in ("renamed", "copied"):
        words.append(f"{status} from {neutralise(old)}")
    elif status in ("new", "deleted"):
        words.append(status)
    if info and info.untracked:
        words.append("untracked")
    if patch and patch.mode:
        words.append(patch.mode)
    return ", ".join(words)


class Document:
    """A DiffView laid out as rows (comments not included: `rows` puts them in)."""

    def __init__(self, view: DiffView) -> None:
        self.view = view
        self.files: list[FileItem] = []
        self.rows: list[Row] = []
        self.anchors: set[Anchor] = set()
        patches = {
            part: parse(text)
            for part, text in (("committed", view.committed), ("uncommitted", view.uncommitted))
        }
        self._list(view, patches)
        for part, found in patches.items():
            if found:
                self.rows += [Row("blank"), Row("section", f"━━ {PARTS[part]} ━━")]
            for patch in found:
                self._patch(FileItem(part, patch))
        if not view.files and not any(patches.values()):
            self.rows.append(Row("note", f"no change against {view.base}"))
        numbers = [max(ln.old, ln.new) for f in self.files for h in f.patch.hunks for ln in h.lines]
        self.gutter = max(3, len(str(max(numbers, default=0))))
        self.width = max((cell_len(r.text) for r in self.rows), default=0) + 2 * self.gutter + 4

    def _list(self, view: DiffView, patches: dict[str, list[FilePatch]]) -> None:
        """The file list: path, counts, what it is; committed files, then uncommitted."""
        listed: dict[str, list[tuple[str, str, str]]] = {}  # part -> (path, counts, what)
        for part in PARTS:
            by_path = {p.path: p for p in patches[part]}
            items = (
                [(f, by_path.get(neutralise(f.path))) for f in view.files if f.part == part]
                if view.files
                else [(None, p) for p in patches[part]]
            )
            listed[part] = [
                (
                    neutralise(f.path) if f else p.path if p else "",
                    counts(f.added, f.deleted) if f else counts(p.added, p.deleted) if p else "",
                    what_it_is(f, p),
                )
                for f, p in items
            ]
        every = [e for entries in listed.values() for e in entries]
        path_w = min(60, max((len(e[0]) for e in every), default=0))
        count_w = max((len(e[1]) for e in every), default=0)
        for part, entries in listed.items():
            if not entries:
                continue
            commits = view.commits if part == "committed" else []
            more = (
                f" · {len(commits)} commit{'s' * (len(commits) != 1)} on {view.branch}"
                if commits
                else ""
            )
            self.rows.append(Row("section", neutralise(f"{PARTS[part]}{more}")))
            self.rows += [Row("commit", neutralise(c)) for c in commits]
            self.rows += [
                Row("entry", f"  {path:<{path_w}}  {size:<{count_w}}  {what}".rstrip())
                for path, size, what in entries
            ]

    def _patch(self, item: FileItem) -> None:
        index, patch = len(self.files), item.patch
        self.files.append(item)
        about = what_it_is(None, patch)
        self.rows.append(
            Row(
                "file",
                f"{patch.path}  {counts(patch.added, patch.deleted)}"
                + (f"  ({about})" if about else ""),
                index,
            )
        )
        if patch.binary:
            self.rows.append(Row("marker", "binary file: not shown", index))
        for h, hunk in enumerate(patch.hunks):
            self.rows.append(Row("hunk", f"{hunk.header} {hunk.section}".rstrip(), index, h))
            for i, line in enumerate(hunk.lines):
                anchor = anchor_of(patch, line, item.part)
                if anchor is not None:
                    self.anchors.add(anchor)
                self.rows.append(
                    Row("code" if anchor else "marker", line.text, index, h, i, anchor)
                )

    def place(self, rows: list[Row], index: int) -> Place:
        """The place of `rows[index]` (`rows`: this document's, with comments)."""
        row = rows[index]
        if row.file < 0 or row.file >= len(self.files):
            return Place(index, row.kind, row.anchor)
        item = self.files[row.file]
        nth = sum(1 for r in rows[:index] if r.file == row.file and r.kind == row.kind)
        return Place(index, row.kind, row.anchor, item.part, item.patch.path, nth)

    def locate(self, rows: list[Row], place: Place) -> int:
        """The row of `rows` (this document's, with comments) nearest to `place` (a place
        in an earlier reading): its line, else the nearest line of its file, else its
        file's row of the same kind, else its file, else the same index."""

        def in_file(part: str) -> list[int]:
            return [
                i
                for i, r in enumerate(rows)
                if r.file >= 0
                and self.files[r.file].patch.path == place.path
                and (not part or self.files[r.file].part == part)
            ]

        if place.anchor is not None:
            same = [
                i
                for i, r in enumerate(rows)
                if r.anchor == place.anchor and r.kind in (place.kind, "code")
            ]
            if same:  # the comment row itself if the cursor was on it, else its line
                return next((i for i in same if rows[i].kind == place.kind), same[0])
        if place.path:
            mine = in_file(place.part) or in_file("")
            if mine:
                anchor = place.anchor
                if anchor is not None:
                    lines = [i for i in mine if rows[i].kind == "code"]
                    if lines:
                        return min(lines, key=lambda i: _distance(rows[i].anchor, anchor))
                kind = [i for i in mine if rows[i].kind == place.kind]
                if kind:
                    return kind[min(place.nth, len(kind) - 1)]
                return mine[0]
        return max(0, min(place.index, len(rows) - 1))

    def with_comments(self, comments: dict[Anchor, str]) -> list[Row]:
        """The rows with each comment under its line; comments whose line is not in this
        diff (it changed since they were written) come first, said so."""
        gone = sorted(a for a in comments if a not in self.anchors)
        rows = [
            Row("note", f"✎ {a}: {comments[a]}  (its line is not in the diff now)", anchor=a)
            for a in gone
        ]
        for row in self.rows:
            rows.append(row)
            if row.kind == "code" and row.anchor in comments:
                rows.append(
                    Row("comment", comments[row.anchor], row.file, row.hunk, row.line, row.anchor)
                )
        return rows


def _distance(a: Anchor | None, b: Anchor) -> tuple[int, int]:
    """How far a line is from another: lines apart, then whether the sides differ."""
    if a is None:
        return (1 << 30, 1)
    return (abs(a.line - b.line), int(a.old != b.old))


@dataclass(frozen=True)
class Palette:
    """The view's colours: hex, never remapped by a theme."""

    syntax: str
    added: str
    removed: str
    plus: str
    minus: str
    cursor: str
    gutter: str
    hunk: str
    file: str
    section: str
    comment: str


DARK = Palette(
    "monokai",
    "#17341f",
    "#3f1a1d",
    "#3fb950",
    "#f85149",
    "#264f78",
    "#6e7681",
    "#58a6ff",
    "#30363d",
    "#d2a8ff",
    "#e3b341",
)
LIGHT = Palette(
    "default",
    "#dafbe1",
    "#ffebe9",
    "#1a7f37",
    "#cf222e",
    "#b6d7ff",
    "#8c959f",
    "#0969da",
    "#eaeef2",
    "#8250df",
    "#9a6700",
)


@lru_cache(maxsize=512)
def _lexer(path: str) -> str:
    return Syntax.guess_lexer(path)


@lru_cache(maxsize=4096)
def _foreground(style: Style) -> Style:
    """A token's style without the theme's background (the row's tint shows through)."""
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


class Painter:
    """Rows as styled text (a row's text and the style of the rest of its width)."""

    def __init__(self, doc: Document, palette: Palette) -> None:
        self.doc, self.p = doc, palette
        self._chunks: dict[tuple[int, int, int], list[Text]] = {}
        self.highlighted = 0  # chunks highlighted so far (only those in sight ever are)

    def paint(self, row: Row, cursor: bool) -> tuple[Text, Style]:
        """The row's text, and the style of the cells after it (`cursor`: the cursor's row)."""
        text, fill = self._paint(row)
        if text.style:  # as a span under the others (a Text's own style is not rendered)
            text.spans.insert(0, Span(0, len(text), text.style))
            text.style = ""
        if cursor:
            text.stylize(Style(bgcolor=self.p.cursor))
            fill = fill + Style(bgcolor=self.p.cursor)
        text.no_wrap, text.end = True, ""
        return text, fill

    def _paint(self, row: Row) -> tuple[Text, Style]:
        p, blank = self.p, " " * (2 * self.doc.gutter + 2)
        if row.kind == "code":
            return self._code(row)
        if row.kind == "comment":
            return Text.assemble(
                blank, ("✎ ", f"bold {p.comment}"), (row.text, f"italic {p.comment}")
            ), Style()
        if row.kind == "hunk":
            head, _, section = row.text.partition(" @@")
            return Text.assemble((f"{head} @@", f"bold {p.hunk}"), (section, p.gutter)), Style()
        if row.kind == "file":
            style = Style(bold=True, bgcolor=p.file)
            return self._counted(Text(f"▌{row.text}", style=style)), style
        if row.kind == "section":
            return Text(row.text, style=f"bold {p.section}"), Style()
        if row.kind == "entry":
            return self._counted(Text(row.text)), Style()
        if row.kind == "commit":
            return Text(f"  {row.text}", style=p.gutter), Style()
        if row.kind == "marker":
            return Text(f"{blank}{row.text}", style=f"italic {p.gutter}"), Style()
        return Text(row.text, style=f"italic {p.comment}" if row.anchor else ""), Style()

    def _counted(self, text: Text) -> Text:
        """The counts after a path in their colours."""
        text.highlight_regex(r"(?<=  )\+\d+(?= |$)", self.p.plus)
        text.highlight_regex(r"(?<= )−\d+(?= |$)", self.p.minus)
        return text

    def _code(self, row: Row) -> tuple[Text, Style]:
        p, w = self.p, self.doc.gutter
        line = self.doc.files[row.file].patch.hunks[row.hunk].lines[row.line]
        code = self._highlighted(row.file, row.hunk, row.line)
        old, new = str(line.old or ""), str(line.new or "")
        tint = {"+": Style(bgcolor=p.added), "-": Style(bgcolor=p.removed)}.get(line.kind, Style())
        mark = {"+": f"bold {p.plus}", "-": f"bold {p.minus}"}.get(line.kind, "")
        text = Text.assemble((f"{old:>{w}} {new:>{w}} ", p.gutter), (line.kind, mark), code)
        if line.kind in "+-":
            text.stylize(tint, 2 * w + 2)
        return text, tint

    def _highlighted(self, file: int, hunk: int, index: int) -> Text:
        """A code line's text, highlighted with its chunk of the hunk."""
        start = index - index % CHUNK
        key = (file, hunk, start)
        lines = self._chunks.get(key)
        if lines is None:
            if len(self._chunks) >= CHUNKS_KEPT:
                self._chunks.clear()
            item = self.doc.files[file]
            lines = self._chunks[key] = self._highlight(
                item.patch.path, item.patch.hunks[hunk].lines[start : start + CHUNK]
            )
            self.highlighted += 1
        return lines[index - start].copy()

    def _highlight(self, path: str, lines: list[Line]) -> list[Text]:
        syntax = Syntax("", _lexer(path), theme=self.p.syntax)
        sides = {
            side: [i for i, ln in enumerate(lines) if ln.kind in kinds]
            for side, kinds in (("old", " -"), ("new", " +"))
        }
        out = [Text(ln.text) for ln in lines]
        for side, which in sides.items():
            if not which:
                continue
            code = "\n".join(lines[i].text for i in which)
            painted = syntax.highlight(code).split("\n", allow_blank=True)
            if len(painted) < len(which):
                continue  # the lexer read it otherwise: plain text
            for i, text in zip(which, painted, strict=False):
                if (side == "new" or lines[i].kind == "-") and text.plain == lines[i].text:
                    text.spans = [
                        Span(s.start, s.end, _foreground(s.style))
                        for s in text.spans
                        if isinstance(s.style, Style)
                    ]
                    text.style = ""
                    out[i] = text
        return out
