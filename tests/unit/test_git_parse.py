"""Parsing git's machine formats as fleet/git.py reads them, on output of the real git where
it matters (renames and binary files in `--numstat -z`), and hostile names."""

from __future__ import annotations

import subprocess
from pathlib import Path

from swarm_tui.fleet import git
from swarm_tui.fleet.store import Task, TaskStatus
from swarm_tui.fleet.worktrees import merge_refusal


def run(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def test_numstat_of_real_git_with_rename_binary_and_odd_names(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    run(repo, "init", "-q")
    run(repo, "config", "user.email", "a@b.invalid")
    run(repo, "config", "user.name", "a")
    (repo / "long.txt").write_text("".join(f"{i}\n" for i in range(40)))
    (repo / "tab\tname.py").write_text("a = 1\n")
    run(repo, "add", ".")
    run(repo, "commit", "-q", "-m", "one")
    run(repo, "mv", "long.txt", "renamed → ü.txt")
    (repo / "tab\tname.py").write_text("a = 2\nb = 3\n")
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 100)
    run(repo, "add", "-A")
    out = run(repo, "-c", "core.quotepath=off", "diff", "--cached", "--numstat", "-z", "-M")
    files = {f.path: f for f in git.parse_numstat(out, "committed")}
    assert files["renamed → ü.txt"].old_path == "long.txt"
    assert (files["renamed → ü.txt"].added, files["renamed → ü.txt"].deleted) == (0, 0)
    assert files["blob.bin"].binary and files["blob.bin"].added == 0
    assert (files["tab\tname.py"].added, files["tab\tname.py"].deleted) == (2, 1)
    assert all(f.part == "committed" for f in files.values())


def test_untracked_files_are_marked_and_part_is_uncommitted():
    text = "3\t0\tnew.py\x001\t1\told.py\x00"
    files = git.parse_numstat(text, "uncommitted", frozenset({"new.py"}))
    assert [(f.path, f.untracked, f.part) for f in files] == [
        ("new.py", True, "uncommitted"),
        ("old.py", False, "uncommitted"),
    ]


def test_truncated_rename_record_is_dropped_not_misread():
    assert git.parse_numstat("1\t2\t\x00only-old-name", "committed") == []


def test_markers_cannot_be_faked_by_output():
    marked = git.Marked()
    fake = "\0@@0000000000000000:end\0"  # a file name or a patch line an agent wrote
    out = f"\0@@{marked.nonce}:untracked\0a.py\0{fake}\0@@{marked.nonce}:end\0"
    parts = marked.parts(out)
    assert parts["untracked"] == f"a.py\0{fake}"
    assert set(parts) == {"untracked", "end"}


def test_conflicts_from_merge_tree_exit_code():
    assert git.conflicts("4b825dc\n", "0") == []
    assert git.conflicts("4b825dc\nb.py\na.py\na.py\n", "1") == ["a.py", "b.py"]
    assert git.conflicts("usage: git merge-tree", "129") is None  # an old git: unknown


def patch_of(*sizes: int) -> str:
    return "".join(f"diff --git a/f{i} b/f{i}\n" + "+x\n" * n for i, n in enumerate(sizes))


def test_trim_keeps_whole_small_files_in_order_and_names_the_rest():
    patch = patch_of(400, 5, 3)  # one large file first, two small ones
    kept, left = git.trim(patch, 200)
    assert "a/f1 b/f1" in kept and "a/f2 b/f2" in kept and "a/f0 b/f0" not in kept
    assert kept.index("f1") < kept.index("f2")
    assert left == ["a/f0 b/f0"]
    assert git.trim(patch, 10_000) == (patch, [])


def test_trim_cuts_the_start_of_one_huge_file_and_says_so():
    kept, left = git.trim(patch_of(1000), 300)
    assert kept.startswith("diff --git a/f0 b/f0\n+x\n") and len(kept) <= 300
    assert left == ["a/f0 b/f0 (cut after 300 characters)"]


def test_prepared_lines_parse_and_ignore_noise():
    out = (
        "warning: something\nSWARM-WT\tGauss\tOK\t/w/Gauss\tmain\tcreated\tsub/\n"
        "SWARM-WT\tNoether\tFAIL\trepo x is not a git repository\t\t\t\n"
    )
    found = git.parse_prepared(out)
    assert found["Gauss"] == git.Prepared("Gauss", True, "/w/Gauss", "main", "created", "sub/")
    assert not found["Noether"].ok and "not a git repository" in found["Noether"].detail


def task(tid: int, status: TaskStatus) -> Task:
    return Task(
        id=tid,
        agent="Gauss",
        position=tid,
        spec="s",
        verify="",
        verify_timeout=1,
        judge="",
        judge_command="",
        max_rounds=5,
        max_minutes=10,
        review_on_idle=True,
        status=status,
        rounds=0,
        reasons="",
        origin="t",
        created=0,
        started=0,
        updated=0,
    )


def test_merge_waits_for_a_complete_task():
    assert "no task a judge found complete" in merge_refusal("Gauss", [])
    assert "#2 is incomplete" in merge_refusal(
        "Gauss", [task(1, TaskStatus.COMPLETE), task(2, TaskStatus.INCOMPLETE)]
    )
    assert "last task #1 is stopped" in merge_refusal("Gauss", [task(1, TaskStatus.STOPPED)])
    assert merge_refusal("Gauss", [task(1, TaskStatus.COMPLETE)]) == ""
