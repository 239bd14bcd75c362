"""A real git repository with an agent's change in a worktree, and that change read the way
the engine reads it (git's own unified diffs and `--numstat -z`), for the diff view's tests.

The change: commits on `swarm/ui/Gauss` that edit a Python file in two places, rename a
file (and edit it), add a binary file, delete a file and add one with no newline at its end
(and an escape sequence in a line); then, not committed, another edit of the Python file and
an untracked file. Names, dates and contents are fixed, so commit ids are the same in every
run (the snapshot shows them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from swarm_tui.protocol.client import FleetView, Refused
from swarm_tui.protocol.models import ChangeView, DiffFileView, DiffView, MessageView
from tests.ui.conftest import FakeClient

BRANCH = "swarm/ui/Gauss"
WORKTREE = "/work/trees/ui/Gauss"  # what the view is told (the real one is under tmp_path)

APP = '''"""The app."""

import os
import sys


def main(argv: list[str]) -> int:
    """Run it."""
    name = argv[1] if len(argv) > 1 else "world"
    print(f"hello {name}")
    return 0


def helper(value: int) -> int:
    return value * 2


class Cache:
    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def get(self, key: str) -> int | None:
        return self.items.get(key)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

RENAMED = (
    "def parse(text):\n    return text.split()\n\n\ndef unparse(words):\n"
    "    return ' '.join(words)\n"
)
TAIL = "first\nsay \x1b[31mred\x1b[0m \x1b]0;title\x07 here\nlast"  # escapes; no newline
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00"


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        check=False,
        env={**ENV, **(env or {})},
    )
    if done.returncode not in (0, 1) or (done.returncode == 1 and args[0] != "diff"):
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode()}")
    return done.stdout.decode(errors="surrogateescape")


ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
    "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
}


def make_repo(tmp: Path) -> tuple[Path, Path]:
    """The repository (on main) and the agent's worktree with its change; returns both."""
    repo, wt = tmp / "repo", tmp / "wt"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "src" / "app.py").write_text(APP)
    (repo / "src" / "old_name.py").write_text(RENAMED)
    (repo / "gone.txt").write_text("this file goes\n")
    (repo / "README.md").write_text("# the project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "The base")
    git(repo, "worktree", "add", "-q", "-b", BRANCH, str(wt), "main")
    app = wt / "src" / "app.py"
    app.write_text(
        APP.replace("import sys\n", "import sys\nimport json\n").replace(
            "return value * 2", "return value * 3"
        )
    )
    git(wt, "mv", "src/old_name.py", "src/new_name.py")
    (wt / "src" / "new_name.py").write_text(RENAMED.replace("text.split()", "text.split(',')"))
    (wt / "logo.png").write_bytes(PNG)
    (wt / "gone.txt").unlink()
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "Parse with commas, a logo")
    (wt / "src" / "tail.txt").write_text(TAIL)
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "A tail without a newline")
    app.write_text(app.read_text().replace('"world"', '"swarm"'))
    (wt / "notes.md").write_text("# notes\n\n- check the cache\n")
    return repo, wt


def numstat(text: str, part: str, untracked: set[str]) -> list[DiffFileView]:
    """`git diff --numstat -z`: counts, then a name, or an empty name and the two of a rename."""
    tokens, out, i = text.split("\0"), [], 0
    while i < len(tokens):
        fields = tokens[i].split("\t", 2)
        i += 1
        if len(fields) != 3:
            continue
        added, deleted, path = fields
        old = ""
        if not path:
            old, path = tokens[i], tokens[i + 1]
            i += 2
        binary = added == "-"
        out.append(
            DiffFileView(
                path=path,
                old_path=old,
                binary=binary,
                added=0 if binary else int(added),
                deleted=0 if binary else int(deleted),
                part=part,  # type: ignore[arg-type]  # committed | uncommitted
                untracked=path in untracked,
            )
        )
    return out


def read_change(wt: Path, tmp: Path, base: str = "main") -> DiffView:
    """The worktree's change against `base`, read as the engine reads it: the commits since
    the merge base, and the working tree (untracked files too) through a temporary index."""
    mb = git(wt, "merge-base", base, "HEAD").strip()
    index = tmp / "index.tmp"
    shutil.copy2(
        git(wt, "rev-parse", "--path-format=absolute", "--git-path", "index").strip(), index
    )
    env = {"GIT_INDEX_FILE": str(index)}
    git(wt, "add", "-u", env=env)
    untracked = set(
        git(wt, "ls-files", "-z", "--others", "--exclude-standard", env=env).split("\0")
    ) - {""}
    for name in sorted(untracked):
        git(wt, "update-index", "--add", name, env=env)
    diff = ("diff", "--no-color", "--no-ext-diff", "-M")
    files = numstat(git(wt, *diff, "--numstat", "-z", mb, "HEAD"), "committed", set()) + numstat(
        git(wt, *diff, "--cached", "--numstat", "-z", "HEAD", env=env), "uncommitted", untracked
    )
    commits = git(wt, "log", "--no-color", "--format=%h %s", f"{mb}..HEAD").splitlines()
    totals = numstat(
        git(wt, *diff, "--cached", "--numstat", "-z", mb, env=env), "uncommitted", untracked
    )
    return DiffView(
        agent="Gauss",
        worktree=WORKTREE,
        branch=BRANCH,
        base=base,
        merge_base=mb,
        added=sum(f.added for f in totals),
        deleted=sum(f.deleted for f in totals),
        changed=len(totals),
        commits=commits,
        files=files,
        committed=git(wt, *diff, mb, "HEAD"),
        uncommitted=git(wt, *diff, "--cached", "HEAD", env=env),
        conflicts=[],
    )


def real_change(tmp: Path) -> DiffView:
    """The change of `make_repo`, read."""
    _, wt = make_repo(tmp)
    return read_change(wt, tmp)


class DiffClient(FakeClient):
    """A still fleet whose agents' changes are given: `diff` answers the next of `diffs`
    (the last one again once they run out), or refuses with `refusal`; `merge` answers
    `merged` or refuses with `merge_refusal`; `send` refuses with `send_refusal` if set."""

    def __init__(self, view: FleetView, *diffs: DiffView, refusal: str = "") -> None:
        super().__init__(view)
        self.diffs, self.refusal = list(diffs), refusal
        self.merged = "merged swarm/ui/Gauss into main (3 commits): 1a2b3c4"
        self.would = "would merge 3 commit(s) of swarm/ui/Gauss into main"
        self.merge_refusal = self.send_refusal = ""
        self.gate = ""  # a refusal that `force` overrides (a task not complete)

    async def diff(self, name: str) -> DiffView:
        self._asked("diff", name=name)
        if self.refusal:
            raise Refused(self.refusal)
        return self.diffs.pop(0) if len(self.diffs) > 1 else self.diffs[0]

    async def merge(
        self,
        name: str,
        into: str = "",
        squash: bool = False,
        force: bool = False,
        check: bool = False,
    ) -> str:
        self._asked(
            "merge-check" if check else "merge", name=name, into=into, squash=squash, force=force
        )
        if self.merge_refusal:
            raise Refused(self.merge_refusal)
        if self.gate and not force:
            raise Refused(self.gate)
        return self.would if check else self.merged

    async def send(
        self, names: list[str], text: str, skill: str = "", params: dict[str, str] | None = None
    ) -> list[MessageView]:
        if self.send_refusal:
            self._asked("send-refused", names=names, text=text)
            raise Refused(self.send_refusal)
        return await super().send(names, text, skill, params)


def with_worktrees(view: FleetView, **changes: ChangeView | None) -> FleetView:
    """The view with these agents' changes set (the others have no worktree)."""
    for name, change in changes.items():
        view.agents[name] = view.agents[name].model_copy(update={"changes": change})
    return view
