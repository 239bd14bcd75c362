"""Write layouts back as TOML (the stdlib reads TOML but does not write it)."""

from __future__ import annotations

import json
from typing import Any

_BARE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def key(k: str) -> str:
    return k if k and set(k) <= _BARE else json.dumps(k, ensure_ascii=False)


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML")


def dumps(data: dict[str, Any], header: str = "") -> str:
    """Top-level scalars, then tables, then arrays of tables (`[[agents]]` ...)."""
    out = [header] if header else []
    tables, arrays = {}, {}
    for k, v in data.items():
        if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            tables[k] = v  # e.g. hosts: one table per host
        elif isinstance(v, dict) and k in ("defaults",):
            tables[k] = {"": v}
        elif (
            isinstance(v, list)
            and v
            and all(isinstance(x, dict) for x in v)
            and k in ("agents", "groups", "reminders")
        ):
            arrays[k] = v
        else:
            out.append(f"{key(k)} = {value(v)}")
    for k, sub in tables.items():
        for name, body in sub.items():
            out.append(f"\n[{key(k)}]" if name == "" else f"\n[{key(k)}.{key(name)}]")
            out += [f"{key(a)} = {value(b)}" for a, b in body.items()]
    for k, items in arrays.items():
        for item in items:
            out.append(f"\n[[{key(k)}]]")
            out += [f"{key(a)} = {value(b)}" for a, b in item.items()]
    return "\n".join(out) + "\n"
