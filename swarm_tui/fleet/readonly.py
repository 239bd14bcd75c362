"""Answers that need no engine: what the journal and the skill files already say.

The socket server answers `messages`, `tasks`, `skills` and `remind list` with these, and the
CLI answers them the same way from the journal on disk (opened read-only) when no engine is
running, so a fleet stopped overnight can still be read the next morning.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

from swarm_tui import paths
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.store import Store

# a journal kept aside by `--fresh`: <fleet>.<YYYYmmdd-HHMMSS>[-n].sqlite3
_KEPT = re.compile(r"\.\d{8}-\d{6}(-\d+)?$")


def messages_reply(store: Store, limit: int) -> dict[str, Any]:
    return {
        "ok": True,
        "messages": [asdict(m) for m in store.messages(limit)],
        "graph": store.talk_graph(),
    }


def tasks_reply(store: Store) -> dict[str, Any]:
    return {
        "ok": True,
        "tasks": [{**asdict(t), "verdicts": store.verdicts(t.id)} for t in store.tasks()],
    }


def reminders_list(store: Store) -> list[dict[str, Any]]:
    """Every reminder, as `swarm remind` prints it (the journal's row)."""
    return [asdict(r) for r in store.reminders()]


def skills_reply(show: str) -> dict[str, Any]:
    from swarm_tui.config.skills import find_skill, load_skills

    if show:
        skill = find_skill(show)
        return {"ok": True, "skill": skill.summary(), "body": skill.body.strip()}
    skills, problems = load_skills()
    return {"ok": True, "skills": [s.summary() for s in skills.values()], "problems": problems}


def journal_of(fleet: str | None) -> Path:
    """The journal of `fleet`, or of the only fleet that has one."""
    if fleet:
        path = paths.db_path(fleet)
        if not path.exists():
            raise SwarmError(
                f"fleet {fleet!r} has no journal in {path.parent} (and no swarm runs it)"
            )
        return path
    found = sorted(p for p in paths.state_dir().glob("*.sqlite3") if not _KEPT.search(p.stem))
    if not found:
        raise SwarmError(
            "no swarm is running and no fleet has a journal here (start one: "
            "swarm demo, or swarm up LAYOUT)"
        )
    if len(found) > 1:
        names = ", ".join(p.stem for p in found)
        raise SwarmError(
            f"no swarm is running; several fleets have journals ({names}): "
            "choose one with --fleet NAME"
        )
    return found[0]


def answer(fleet: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The reply a running engine would give to a read-only request, or None when the
    request needs the engine."""
    op = payload.get("op")
    if op == "skills":
        return skills_reply(str(payload.get("show", "")))
    if op not in ("messages", "tasks") and not (op == "remind" and payload.get("action") == "list"):
        return None
    path = journal_of(fleet)
    try:
        store = Store.read_only(path)
        try:
            if op == "messages":
                return messages_reply(store, int(payload.get("limit", 50)))
            if op == "tasks":
                return tasks_reply(store)
            return {"ok": True, "reminders": reminders_list(store)}
        finally:
            store.close()
    except sqlite3.Error as exc:  # unreadable, locked, written by another version
        raise SwarmError(f"the journal {path} cannot be read ({exc})") from None
