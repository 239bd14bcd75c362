"""The command that runs swarm again, as the user can type it: `swarm` once it is on their
PATH, else what they ran (`.venv/bin/swarm`, or `python3 -m swarm_tui` from the checkout)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # where `python3 -m swarm_tui` runs


def swarm_command(*args: str, argv0: str | None = None, cwd: Path | None = None) -> str:
    """`swarm ARGS`, spelled so that it runs from `cwd` (the current directory) for
    whoever started this process as `argv0` (sys.argv[0])."""
    ran = argv0 if argv0 is not None else sys.argv[0]
    here = (cwd or Path.cwd()).resolve()
    words = [shlex.quote(a) for a in args]
    if Path(ran).name == "swarm":
        found = shutil.which("swarm")
        if found and Path(found).resolve() == (here / ran).resolve():
            return " ".join(["swarm", *words])
        return " ".join([shlex.quote(ran), *words])  # a path, as they typed it
    # `python3 -m swarm_tui` (the checkout's bootstrap) or `python -m swarm_tui.cli`
    command = " ".join(["python3 -m swarm_tui", *words])
    if here == CHECKOUT:
        return command
    return f"cd {shlex.quote(os.fspath(CHECKOUT))} && {command}"
