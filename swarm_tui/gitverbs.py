"""`swarm diff`, `swarm merge` and `swarm down --clean`: agents' worktrees from a shell.

`diff` prints the patch alone on standard output (so `swarm diff NAME | git apply` works) and
says where it comes from on standard error; `merge` prints one line of what was done.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from swarm_tui import paths
from swarm_tui.client import ClientError, Refused, find_socket, request

# what a terminal would act on, kept out of what is printed to one (a patch line may hold
# anything an agent wrote)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def add_verbs(sub: Any) -> None:
    diff = sub.add_parser(
        "diff",
        help="print an agent's change in its worktree against its "
        "base (the patch on stdout; `--stat`: files and counts)",
    )
    diff.add_argument("name")
    diff.add_argument("--stat", action="store_true", help="files with added/removed lines")
    diff.add_argument("--fleet")
    merge = sub.add_parser(
        "merge",
        help="merge an agent's worktree branch into its base once its task is complete",
        description="swarm merge NAME [--into BRANCH] [--squash] [--force] "
        "[--check]. "
        "Refused, with nothing changed, on conflicts (listed), a dirty base checkout, "
        "uncommitted work in the agent's worktree, or a task not complete (--force merges "
        "anyway). Exit 0 merged, 1 refused, 2 bad input or no engine.",
    )
    merge.add_argument("name")
    merge.add_argument(
        "--into", default="", help="the branch to merge into (default: the agent's base)"
    )
    merge.add_argument(
        "--squash", action="store_true", help="one commit on the base, not a merge commit"
    )
    merge.add_argument(
        "--force",
        action="store_true",
        help="merge even though its task is "
        "not complete, or with uncommitted work in its worktree (its commits "
        "only)",
    )
    merge.add_argument(
        "--check",
        action="store_true",
        help="say what a merge would do (or why not), change nothing",
    )
    merge.add_argument("--fleet")


class Trouble(ClientError):
    """Bad input or no engine: exit 2 (a refusal of the engine's is exit 1)."""

    exit_code = 2


def _ask(args: argparse.Namespace, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    try:
        return request(find_socket(args.fleet, paths.run_dir()), payload, timeout=timeout)
    except Refused as exc:  # the engine's one line: bad input is an unknown agent
        if str(exc).startswith("no agent named"):
            raise Trouble(str(exc)) from None
        raise
    except ClientError as exc:  # no engine, several engines, none answering
        raise Trouble(str(exc)) from None


def cmd_diff(args: argparse.Namespace) -> int:
    from swarm_tui.protocol.models import DiffView  # pydantic: not for every `swarm` verb

    reply = _ask(args, {"op": "diff", "agent": args.name, "stat": args.stat}, timeout=60)
    view = DiffView.model_validate(reply["diff"])
    tty = sys.stdout.isatty()
    print(
        f"swarm: {view.agent}: {view.branch} against {view.base} (worktree {view.worktree} "
        f"on {view.host}); {len(view.commits)} commit(s)",
        file=sys.stderr,
    )
    if view.conflicts:
        print(f"swarm: conflicts with {view.base} in {', '.join(view.conflicts)}", file=sys.stderr)
    if args.stat:
        for f in view.files:
            counts = "binary" if f.binary else f"+{f.added} -{f.deleted}"
            name = f"{f.old_path} => {f.path}" if f.old_path else f.path
            what = "untracked" if f.untracked else f.part
            print(f"{counts:>14}  {_shown(name, tty)}  ({what})")
    else:
        for patch in (view.committed, view.uncommitted):
            if patch:
                sys.stdout.write(_shown(patch, tty))
    if view.trimmed:
        print(f"swarm: {view.trimmed}", file=sys.stderr)
    return 0


def _shown(text: str, tty: bool) -> str:
    return _CONTROLS.sub("?", text.replace("\t", "    ")) if tty else text


def cmd_merge(args: argparse.Namespace) -> int:
    reply = _ask(
        args,
        {
            "op": "merge",
            "agent": args.name,
            "into": args.into,
            "squash": args.squash,
            "force": args.force,
            "check": args.check,
        },
        timeout=120,
    )
    print(f"swarm: {args.name}: {reply['done']}")
    return 0
