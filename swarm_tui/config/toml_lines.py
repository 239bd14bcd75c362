"""Where each table and key of a TOML text starts, so a problem pydantic finds at a location
such as ("agents", 5, "colour") is reported at its line of the file."""

from __future__ import annotations

import json
import re

Loc = tuple[str | int, ...]

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")


def _key_parts(dotted: str) -> list[str]:
    parts = re.findall(_KEY, dotted)
    return [json.loads(p) if p.startswith('"') else p.strip("'") for p in parts]


def line_numbers(text: str) -> dict[Loc, int]:
    """Where each table and key of a TOML text starts (1-based), keyed like pydantic's
    error locations: `[[agents]]` number 6, key `colour` is ("agents", 5, "colour")."""
    index: dict[Loc, int] = {}
    arrays: set[tuple[str, ...]] = set()  # paths (without indices) of arrays of tables
    counts: dict[Loc, int] = {}
    table: Loc = ()
    multiline = ""
    for n, line in enumerate(text.splitlines(), 1):
        if multiline:
            if line.count(multiline) % 2:
                multiline = ""
            continue
        header = _HEADER.match(line)
        assign = None if header else _ASSIGN.match(line)
        if header:
            parts = _key_parts(header.group(2))
            loc: Loc = ()
            for i, part in enumerate(parts):
                loc += (part,)
                last = i == len(parts) - 1
                if last and header.group(1) == "[[":
                    arrays.add(tuple(parts))
                    counts[loc] = counts.get(loc, -1) + 1
                    loc += (counts[loc],)
                elif not last and tuple(parts[: i + 1]) in arrays:
                    loc += (counts.get(loc, 0),)
            table = loc
            index.setdefault(table, n)
        elif assign:
            index.setdefault(table + tuple(_key_parts(assign.group(1))), n)
            rest = line[assign.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2:
                    multiline = quote
    return index


def line_of(loc: Loc, index: dict[Loc, int]) -> int | None:
    for n in range(len(loc), 0, -1):
        if loc[:n] in index:
            return index[loc[:n]]
    return None


def dotted(loc: Loc) -> str:
    """A location as a user reads it: agents[5].colour."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"
