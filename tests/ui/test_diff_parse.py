"""Git's unified diffs read into files, hunks and numbered lines (diffparse: no Textual):
on diffs git wrote just now in a real repository (a rename, a binary file, new and deleted
files, a file with no newline at its end, an untracked file), on hand-written corner cases,
and on hostile lines, whose control characters must never survive to be drawn."""

from __future__ import annotations

import re
from pathlib import Path

from swarm_tui.ui.diffparse import (
    Anchor,
    FilePatch,
    Line,
    anchor_of,
    neutralise,
    parse,
    review_message,
    unquote,
)
from tests.ui.diffrepo import real_change

CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def by_path(patches: list[FilePatch]) -> dict[str, FilePatch]:
    return {p.path: p for p in patches}


def test_a_real_change_reads_as_git_wrote_it(tmp_path: Path) -> None:
    view = real_change(tmp_path)
    committed = by_path(parse(view.committed))
    assert list(committed) == [
        "gone.txt",
        "logo.png",
        "src/app.py",
        "src/new_name.py",
        "src/tail.txt",
    ]
    gone, logo, app, renamed, tail = committed.values()
    assert (gone.status, gone.added, gone.deleted) == ("deleted", 0, 1)
    assert gone.hunks[0].lines == [Line("-", "this file goes", 1, 0)]
    assert (logo.status, logo.binary, logo.hunks) == ("new", True, [])
    assert (renamed.status, renamed.old_path) == ("renamed", "src/old_name.py")
    assert [(ln.kind, ln.text) for ln in renamed.hunks[0].lines if ln.kind != " "] == [
        ("-", "    return text.split()"),
        ("+", "    return text.split(',')"),
    ]
    # two hunks, each numbered from its header, both sides
    assert [(h.header, h.section) for h in app.hunks] == [
        ("@@ -2,6 +2,7 @@", ""),
        ("@@ -12,7 +13,7 @@", "def main(argv: list[str]) -> int:"),
    ]
    changed = [ln for h in app.hunks for ln in h.lines if ln.kind != " "]
    assert changed == [
        Line("+", "import json", 0, 5),
        Line("-", "    return value * 2", 15, 0),
        Line("+", "    return value * 3", 0, 16),
    ]
    context = app.hunks[1].lines[2]
    assert (context.text, context.old, context.new) == ("def helper(value: int) -> int:", 14, 15)
    # a file with no newline at its end: the marker is a line of its own, not code
    assert tail.status == "new"
    assert [ln.kind for ln in tail.hunks[0].lines] == ["+", "+", "+", "\\"]
    assert tail.hunks[0].lines[-1].text == "No newline at end of file"
    assert tail.hunks[0].lines[1].text == "say ^[[31mred^[[0m ^[]0;title^G here"
    # the working tree apart: the untracked file as a new one, the edit since the commit
    uncommitted = by_path(parse(view.uncommitted))
    assert list(uncommitted) == ["notes.md", "src/app.py"]
    assert uncommitted["notes.md"].status == "new"
    assert [ln.new for ln in uncommitted["notes.md"].hunks[0].lines] == [1, 2, 3]
    # the counts agree with git's own (--numstat)
    for f in view.files:
        patch = by_path(parse(getattr(view, f.part)))[f.path]
        assert (patch.added, patch.deleted, patch.binary) == (f.added, f.deleted, f.binary)


def test_anchors_are_new_numbers_and_old_ones_for_removed_lines(tmp_path: Path) -> None:
    app = by_path(parse(real_change(tmp_path).committed))["src/app.py"]
    lines = app.hunks[1].lines
    removed, added, context = lines[3], lines[4], lines[0]
    assert str(anchor_of(app, removed, "committed")) == "src/app.py:15 (old)"
    assert str(anchor_of(app, added, "committed")) == "src/app.py:16"
    assert str(anchor_of(app, context, "committed")) == "src/app.py:13"
    assert anchor_of(app, Line("\\", "No newline at end of file"), "committed") is None
    # a deleted file's lines are anchored at its old name
    gone = by_path(parse(real_change(tmp_path / "2").committed))["gone.txt"]
    assert str(anchor_of(gone, gone.hunks[0].lines[0], "committed")) == "gone.txt:1 (old)"


def test_the_review_is_one_message_in_file_and_line_order() -> None:
    comments = {
        Anchor("src/b.py", 3): "and  here\ttoo",
        Anchor("src/a.py", 40): "later line",
        Anchor("src/a.py", 7, old=True): "why remove this?",
        Anchor("src/a.py", 7, part="uncommitted"): "not committed yet",
        Anchor("src/a.py", 12): "",  # an empty comment is no comment
    }
    assert review_message(comments) == (
        "Review of your change:\n"
        "src/a.py:7: not committed yet\n"
        "src/a.py:7 (old): why remove this?\n"
        "src/a.py:40: later line\n"
        "src/b.py:3: and here too"
    )


MULTI = """\
diff --git a/m.py b/m.py
old mode 100644
new mode 100755
index 1111111..2222222
--- a/m.py
+++ b/m.py
@@ -1,3 +1,3 @@
 a
--- a/looks like a header
+++ b/so does this
 c
@@ -10 +10,2 @@ def f():
 x
+y
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/same.txt b/renamed.txt
similarity index 100%
rename from same.txt
rename to renamed.txt
"""


def test_headers_hunks_and_lines_that_look_like_headers() -> None:
    m, run, same = parse(MULTI)
    assert (m.path, m.mode, m.added, m.deleted) == ("m.py", "mode 100644 → 100755", 2, 1)
    # a removed `-- a/…` and an added `++ b/…` inside a hunk are lines, not a new header
    assert [ln.kind + ln.text for ln in m.hunks[0].lines] == [
        " a",
        "--- a/looks like a header",
        "+++ b/so does this",
        " c",
    ]
    assert [(ln.old, ln.new) for ln in m.hunks[1].lines] == [(10, 10), (0, 11)]
    assert (run.path, run.mode, run.hunks) == ("run.sh", "mode 100644 → 100755", [])
    assert (same.path, same.old_path, same.status, same.hunks) == (
        "renamed.txt",
        "same.txt",
        "renamed",
        [],
    )
    assert parse("") == []


def test_a_patch_cut_short_ends_where_it_ends() -> None:
    cut = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,9 +1,9 @@\n a\n-b\n+B\n"
    (x,) = parse(cut)
    assert [(ln.kind, ln.text) for ln in x.hunks[0].lines] == [(" ", "a"), ("-", "b"), ("+", "B")]


def test_quoted_names() -> None:
    assert unquote('"t\\303\\251st \\"q\\".txt"') == 't\u00e9st "q".txt'
    assert unquote("plain name.txt") == "plain name.txt"
    diff = (
        'diff --git "a/t\\303\\251st\\tx" "b/t\\303\\251st\\tx"\nnew file mode 100644\n'
        "index 0000000..1111111\n--- /dev/null\n"
        '+++ "b/t\\303\\251st\\tx"\n@@ -0,0 +1 @@\n+hi\n'
        "diff --git a/with space.txt b/with space.txt\nindex 1..2 100644\n"
        "--- a/with space.txt\t\n+++ b/with space.txt\t\n@@ -1 +1 @@\n-a\n+b\n"
    )
    quoted, spaced = parse(diff)
    assert quoted.path == "t\u00e9st    x"  # its tab drawn as spaces, never sent as a tab
    assert spaced.path == "with space.txt"


HOSTILE = (
    'diff --git "a/evil\\033]0;pwn\\007.py" "b/evil\\033]0;pwn\\007.py"\n'
    "index 1..2 100644\n"
    '--- "a/evil\\033]0;pwn\\007.py"\n'
    '+++ "b/evil\\033]0;pwn\\007.py"\n'
    "@@ -1,2 +1,2 @@ \x1b[2J section\n"
    " \x1b]52;c;aGFja2Vk\x07clipboard\n"
    "-old \x9b31m c1 \x9d0;x\x9c osc \x1b[5A\r\n"
    "+new\ttab \x1bc reset \x00 nul \x7f del\r\n"
)


def test_control_characters_never_survive() -> None:
    (evil,) = parse(HOSTILE)
    texts = [
        evil.path,
        evil.hunks[0].header,
        evil.hunks[0].section,
        *(ln.text for ln in evil.hunks[0].lines),
    ]
    for text in texts:
        assert not CONTROLS.search(text), repr(text)
    assert evil.path == "evil^[]0;pwn^G.py"
    assert evil.hunks[0].section == "^[[2J section"
    assert [ln.text for ln in evil.hunks[0].lines] == [
        "^[]52;c;aGFja2Vk^Gclipboard",
        "old <9B>31m c1 <9D>0;x<9C> osc ^[[5A",  # the closing CR dropped
        "new tab ^[c reset ^@ nul ^? del",
    ]
    assert neutralise("a\tb") == "a   b" and neutralise("x\ry") == "x^My"
