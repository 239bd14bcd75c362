"""The machine's processes as /proc shows them (Linux), for test fixtures."""

from __future__ import annotations

from pathlib import Path


def stats() -> dict[int, tuple[str, list[str]]]:
    """pid -> (command name, the fields of /proc/PID/stat after it: state ppid pgrp session
    ...), for every process; one that ends while it is read is left out."""
    out: dict[int, tuple[str, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        out[int(entry.name)] = (comm, stat[stat.rindex(")") + 2 :].split())
    return out
