"""Git, as swarm runs it on an agent's host: shell scripts for the host's one-off command
channel, and parsers of what they print.

Everything is read in git's machine formats (`--numstat -z`, `merge-tree -z`, `--porcelain
-z`, unified diffs); nothing parses git's human output. A script prints its parts between
markers that carry a random nonce, so no file name or patch line can fake one. The agent's
own index is never touched: what its working tree holds (untracked files included) is read
through a temporary index.
"""

from __future__ import annotations

import re
import secrets
import shlex
from dataclasses import dataclass

from swarm_tui.protocol.models import DiffFileView

# files not yet tracked are read into the temporary index up to this size; larger ones (a
# model checkpoint, a dataset) are listed, never hashed into the repository's objects
UNTRACKED_MAX_KB = 5120
UNTRACKED_MAX_FILES = 2000
PATCH_MAX = 4_000_000  # bytes of each patch a script prints (the view trims further)

PRELUDE = r"""export GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0
g() { git -c core.quotepath=off -c color.ui=never -c diff.noprefix=false "$@"; }
home() {  # a path as the node reads it: ~ is its home, @state/ swarm's state directory
  case $1 in "~") printf '%s' "$HOME" ;; "~/"*) printf '%s/%s' "$HOME" "${1#\~/}" ;;
    "@state/"*) printf '%s/%s' "${SWARM_HOME:-$HOME/.local/state/swarm}" "${1#@state/}" ;;
    *) printf '%s' "$1" ;; esac; }
"""


def assign(**values: str) -> str:
    """Shell variable assignments, each value quoted."""
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in values.items())


class Marked:
    """A script's output cut at its nonce-carrying markers: `part(name)` is what the script
    printed after `mark name`."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(8)

    def mark(self, name: str) -> str:
        return f"printf '\\0@@{self.nonce}:%s\\0' {name}\n"

    def parts(self, out: str) -> dict[str, str]:
        pieces = re.split(f"\0@@{self.nonce}:([a-z_-]+)\0", out)
        return {pieces[i]: pieces[i + 1] for i in range(1, len(pieces) - 1, 2)}


# ---------------------------------------------------------------------------- preparing
# For each agent: check (and in mode `create`, make) its worktree. One line per agent:
# SWARM-WT <tab> name <tab> OK|FAIL <tab> path-or-reason <tab> base <tab> how
PREPARE = (
    PRELUDE
    + r"""
say() { [ "$1" = FAIL ] && failed=1
  printf 'SWARM-WT\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "${3:-}" "${4:-}" \
  "${prefix:-}"; }
one() {  # agents of one repository come together: what is the same is asked once
  mode=$1 name=$2 repo=$(home "$3") wt=$(home "$4") br=$5 base=$6 mark=$7
  command -v git >/dev/null 2>&1 || { say FAIL "git is not installed here"; return; }
  if [ "$repo" != "${seen_repo-}" ]; then
    seen_repo=$repo seen_base= prefix=
    top=$(g -C "$repo" rev-parse --show-toplevel 2>/dev/null) &&
      prefix=$(g -C "$repo" rev-parse --show-prefix) || top=
  fi
  [ -n "$top" ] || { say FAIL "repo $3 is not a git repository (or does not exist)"; return; }
  if [ -z "$base" ]; then
    base=$(g -C "$top" config --get "branch.$br.swarmbase" 2>/dev/null ||
           g -C "$top" symbolic-ref --short -q HEAD) ||
      { say FAIL "repo $3 has a detached HEAD: set base = \"BRANCH\""; return; }
  fi
  if [ "$base" != "$seen_base" ]; then
    g -C "$top" rev-parse -q --verify "$base^{commit}" >/dev/null ||
      { say FAIL "base $base does not exist in $3: set base to an existing branch"; return; }
    seen_base=$base
  fi
  if [ -e "$wt" ]; then
    cur=$(g -C "$wt" symbolic-ref --short -q HEAD 2>/dev/null)
    if [ "$cur" = "$br" ]; then say OK "$(cd "$wt" && pwd -P)" "$base" reused; return; fi
    say FAIL "$wt exists and is not its worktree on $br: move it away"; return
  fi
  if g -C "$top" show-ref -q --verify "refs/heads/$br"; then
    own=$(g -C "$top" config --get "branch.$br.swarm" 2>/dev/null)
    [ "$own" = "$mark" ] || { say FAIL "branch $br exists in $3 and swarm did not make it: \
rename or delete it, or use another fleet name"; return; }
    [ "$mode" = check ] && { say OK "$wt" "$base" check; return; }
    g -C "$top" worktree prune
    (umask 077; mkdir -p "${wt%/*}") && out=$(g -C "$top" worktree add -q "$wt" "$br" 2>&1) ||
      { say FAIL "git worktree add failed: $(printf '%s' "$out" | tail -n 1)"; return; }
    how=reattached
  else
    [ "$mode" = check ] && { say OK "$wt" "$base" check; return; }
    (umask 077; mkdir -p "${wt%/*}") &&
      out=$(g -C "$top" worktree add -q -b "$br" "$wt" "$base" 2>&1) ||
      { say FAIL "git worktree add failed: $(printf '%s' "$out" | tail -n 1)"; return; }
    g -C "$top" config "branch.$br.swarm" "$mark"
    g -C "$top" config "branch.$br.swarmbase" "$base"
    how=created
  fi
  say OK "$(cd "$wt" && pwd -P)" "$base" "$how"
}
"""
)


@dataclass(frozen=True)
class Prepared:
    name: str
    ok: bool
    detail: str  # the worktree's path when ok, else what is wrong
    base: str = ""
    how: str = ""  # check | created | reused | reattached
    prefix: str = ""  # where `repo` is inside its repository ("" at its top, else "sub/")


def parse_prepared(out: str) -> dict[str, Prepared]:
    found: dict[str, Prepared] = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) >= 4 and parts[0] == "SWARM-WT":
            parts += [""] * (7 - len(parts))
            found[parts[1]] = Prepared(
                parts[1], parts[2] == "OK", parts[3], parts[4], parts[5], parts[6]
            )
    return found


# ---------------------------------------------------------------------------- reading
def read_script(marked: Marked, wt: str, base: str, patches: bool) -> str:
    """The script that reads an agent's change: counts (committed, uncommitted, in all),
    untracked files, conflicts with the base, and with `patches` the commits and patches."""
    m = marked.mark
    diff = "g diff --no-color --no-ext-diff -M"
    script = (
        PRELUDE
        + assign(wt=wt, base=base)
        + f"""
wt=$(home "$wt")
cd "$wt" 2>/dev/null || {{ echo "no worktree at $wt"; exit 3; }}
mb=$(g merge-base "$base" HEAD 2>&1) || {{ echo "base $base: $mb"; exit 4; }}
idx=$(mktemp) || exit 5
trap 'rm -f "$idx"' EXIT
cp -p "$(g rev-parse --git-path index)" "$idx" 2>/dev/null  # -p: git's racy-clean check
export GIT_INDEX_FILE="$idx"
g add -u >/dev/null 2>&1
untracked() {{  # the untracked files (not ignored) of one size class, NUL-separated
  g ls-files -z --others --exclude-standard | head -z -n {UNTRACKED_MAX_FILES} |
    xargs -0 -r sh -c 'for f do set -- "$@" "./$f"; shift; done
      find "$@" -maxdepth 0 -type f -size "$0" -print0' "$1"
}}
untracked -{UNTRACKED_MAX_KB}k > "$idx.u"
g update-index --add -z --stdin < "$idx.u" >/dev/null 2>&1
{m("untracked")}cat "$idx.u"; rm -f "$idx.u"
{m("large")}untracked +{UNTRACKED_MAX_KB - 1}k
{m("mb")}printf '%s' "$mb"
{m("all")}{diff} --cached --numstat -z "$mb"
{m("committed")}{diff} --numstat -z "$mb" HEAD
{m("uncommitted")}{diff} --cached --numstat -z HEAD
g merge-tree --write-tree --name-only --no-messages "$base" HEAD > "$idx.c" 2>/dev/null
rc=$?
{m("conflicts")}cat "$idx.c"; rm -f "$idx.c"
{m("merge_rc")}printf '%s' "$rc"
"""
    )
    script += f"""{m("commits")}g log --no-color --format='%h %s' -n 200 "$mb..HEAD"
"""
    if patches:
        script += f"""{m("committed_patch")}{diff} "$mb" HEAD | head -c {PATCH_MAX}
{m("uncommitted_patch")}{diff} --cached HEAD | head -c {PATCH_MAX}
"""
    return script + m("end")


def parse_numstat(
    text: str, part: str = "committed", untracked: frozenset[str] = frozenset()
) -> list[DiffFileView]:
    """`git diff --numstat -z`: `added TAB deleted TAB path NUL`, a rename `added TAB deleted
    TAB NUL old NUL new NUL`, binary files with `-` for both counts."""
    tokens = text.split("\0")
    out: list[DiffFileView] = []
    i = 0
    while i < len(tokens):
        head = tokens[i]
        i += 1
        fields = head.split("\t", 2)
        if len(fields) != 3:
            continue
        added, deleted, path = fields
        old = ""
        if not path:  # a rename or copy: the two names follow
            if i + 1 >= len(tokens):
                break
            old, path = tokens[i], tokens[i + 1]
            i += 2
        binary = added == "-" and deleted == "-"
        out.append(
            DiffFileView(
                path=path,
                old_path=old,
                binary=binary,
                added=0 if binary else _int(added),
                deleted=0 if binary else _int(deleted),
                part="committed" if part == "committed" else "uncommitted",
                untracked=path in untracked,
            )
        )
    return out


def _int(text: str) -> int:
    return int(text) if text.isdigit() else 0


def names(text: str) -> list[str]:
    """NUL-separated file names."""
    return [n for n in text.split("\0") if n]


def conflicts(text: str, rc: str) -> list[str] | None:
    """`git merge-tree --write-tree --name-only`: the tree, then the conflicted files (one a
    line) when it exits 1. None when git could not tell (an old git, an error)."""
    if rc.strip() == "0":
        return []
    if rc.strip() != "1":
        return None
    return sorted({n for n in text.splitlines()[1:] if n})


# ---------------------------------------------------------------------------- trimming
FILE_HEADER = re.compile(r"^diff --git ", re.MULTILINE)


def file_patches(patch: str) -> list[str]:
    """A unified diff cut into one piece per file."""
    starts = [m.start() for m in FILE_HEADER.finditer(patch)]
    return [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=True)]


def trim(patch: str, limit: int) -> tuple[str, list[str]]:
    """At most `limit` characters of a patch: whole files, the smallest first (many small
    changes say more than the start of one large one), in the patch's order; when no file
    fits whole, the start of the first. Returns the patch and the files left out (or cut)."""
    pieces = file_patches(patch)
    keep: set[int] = set()
    size = 0
    for i in sorted(range(len(pieces)), key=lambda i: len(pieces[i])):
        if size + len(pieces[i]) > limit:
            break
        keep.add(i)
        size += len(pieces[i])
    kept, left = [], []
    for i, piece in enumerate(pieces):
        header = piece.split("\n", 1)[0].removeprefix("diff --git ")
        if i in keep:
            kept.append(piece)
        elif not keep and not kept and limit > 200:
            kept.append(piece[:limit].rsplit("\n", 1)[0] + "\n")
            left.append(f"{header} (cut after {limit} characters)")
        else:
            left.append(header)
    return "".join(kept), left


# ---------------------------------------------------------------------------- merging
MERGE = r"""  # after PRELUDE and assign(repo, wt, br, into, message, squash, force, check)
cd "$(home "$repo")" 2>/dev/null || { echo "FAIL repo $repo is gone"; exit 0; }
g rev-parse -q --verify "refs/heads/$into" >/dev/null ||
  { echo "FAIL branch $into does not exist in $repo"; exit 0; }
# what no merge takes: the worktree's uncommitted files (first line, whatever follows)
left=$(g -C "$(home "$wt")" status --porcelain 2>/dev/null | wc -l)
echo "LEFT $left"
if [ "$force" != 1 ] && [ "$left" != 0 ]; then echo "UNCOMMITTED $left"; exit 0; fi
if g merge-base --is-ancestor "$br" "$into"; then echo "NOTHING"; exit 0; fi
old=$(g rev-parse "refs/heads/$into")
out=$(g merge-tree --write-tree --name-only --no-messages "$into" "$br" 2>&1)
case $? in
  0) tree=$(printf '%s\n' "$out" | head -n 1) ;;
  1) echo "CONFLICT"; printf '%s\n' "$out" | tail -n +2; exit 0 ;;
  *) echo "FAIL git merge-tree cannot merge here (git 2.38 or newer is needed)"; exit 0 ;;
esac
# the base already holds all of it (a squash merged it before): nothing to take
[ "$tree" = "$(g rev-parse "$into^{tree}")" ] && { echo "NOTHING"; exit 0; }
# where the base is checked out (porcelain: worktree PATH, then branch refs/heads/NAME)
at=$(g worktree list --porcelain | awk -v ref="refs/heads/$into" '
  /^worktree /{ path = substr($0, 10) } $0 == "branch " ref { print path; exit }')
if [ -n "$at" ] && [ -n "$(g -C "$at" status --porcelain --untracked-files=no)" ]; then
  echo "DIRTY $at"; exit 0
fi
if [ "$check" = 1 ]; then echo "READY $(g rev-list --count "$into..$br")"; exit 0; fi
if [ "$squash" = 1 ]; then set -- -p "$old"; else set -- -p "$old" -p "$br"; fi
new=$(printf '%s\n' "$message" | g commit-tree "$tree" "$@" 2>&1) ||
  { echo "FAIL git commit-tree: $(printf '%s' "$new" | tail -n 1)"; exit 0; }
if [ -n "$at" ]; then  # its checkout is clean: move it forward to the merge, as git would
  err=$(g -C "$at" merge --ff-only -q "$new" 2>&1) ||
    { echo "FAIL $(printf '%s' "$err" | head -n 1)"; exit 0; }
else
  g update-ref -m "swarm merge $br" "refs/heads/$into" "$new" "$old" ||
    { echo "FAIL $into moved meanwhile: try again"; exit 0; }
fi
echo "MERGED $(g rev-parse --short "$new") $at"
"""


# ---------------------------------------------------------------------------- cleaning
# For each agent after `swarm down --clean`: remove a worktree whose branch is merged into its
# base and which holds nothing uncommitted; keep (and say why) every other.
CLEAN = (
    PRELUDE
    + r"""
say() { printf 'SWARM-CLEAN\t%s\t%s\t%s\n' "$name" "$1" "$2"; }
one() {
  name=$1 repo=$(home "$2") wt=$(home "$3") br=$4 base=$5
  [ -e "$wt" ] || { say GONE "no worktree at $3"; return; }
  top=$(g -C "$repo" rev-parse --show-toplevel 2>/dev/null) ||
    { say KEPT "repo $2 is gone"; return; }
  [ -n "$base" ] || base=$(g -C "$top" config --get "branch.$br.swarmbase")
  dirty=$(g -C "$wt" status --porcelain | wc -l)
  if ! g -C "$top" merge-base --is-ancestor "$br" "$base" 2>/dev/null; then
    # a squash merge leaves the commits unmerged to git, their content in the base
    tree=$(g -C "$top" merge-tree --write-tree --no-messages "$base" "$br" 2>/dev/null)
    if [ -z "$tree" ] || [ "$tree" != "$(g -C "$top" rev-parse "$base^{tree}")" ]; then
      n=$(g -C "$top" rev-list --count "$base..$br" 2>/dev/null)
      say KEPT "$br has ${n:-?} commit(s) not merged into $base; $dirty uncommitted file(s) at $wt"
      return
    fi
  fi
  [ "$dirty" = 0 ] || { say KEPT "$dirty uncommitted file(s) at $wt"; return; }
  err=$(g -C "$top" worktree remove "$wt" 2>&1) || { say KEPT "git: $err"; return; }
  if g -C "$top" branch -d -q "$br" 2>/dev/null; then
    g -C "$top" config --remove-section "branch.$br" 2>/dev/null
    say REMOVED "$wt and branch $br (merged into $base)"
  else  # never deleted by force: the user says so
    say REMOVED "$wt; branch $br kept (its content is in $base, its commits are not: \
\`git branch -D $br\` deletes it)"
  fi
}
"""
)


def parse_clean(out: str) -> list[tuple[str, str, str]]:
    """(agent, REMOVED|KEPT|GONE, detail) per line of the clean script."""
    rows = []
    for line in out.splitlines():
        if line.startswith("SWARM-CLEAN\t") and line.count("\t") >= 3:
            _, agent, what, detail = line.split("\t")[:4]
            rows.append((agent, what, detail))
    return rows
