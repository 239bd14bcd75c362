"""`swarm save`: write the running fleet as a layout that `swarm up` brings back exactly —
hosts, agents and groups (kept short), CLIs, models, roles, focus labels, open tasks,
reminders, tile order."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm_tui.config.layout import AGENT_NAME, layout_dirs, parse_layout
from swarm_tui.config.toml_out import dumps
from swarm_tui.errors import ConfigError
from swarm_tui.fleet.tasks import OPEN_TASK

if TYPE_CHECKING:
    from swarm_tui.fleet.engine import Fleet


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g}h" if seconds % 3600 == 0 else \
        f"{seconds / 60:g}m" if seconds % 60 == 0 else f"{seconds:g}s"


def layout_data(fleet: Fleet, name: str) -> dict[str, Any]:
    layout = fleet.loaded.layout
    data = layout.model_dump(mode="json", exclude_defaults=True)
    data["name"] = name
    data.pop("focus", None)
    data.pop("tasks", None)
    for agent in data.get("agents", []):
        agent.pop("tasks", None)  # written below from the journal: open tasks only
    base = fleet.loaded.path.parent
    for agent in data.get("agents", []):
        cwd = agent.get("cwd")
        if cwd and not Path(cwd).is_absolute():
            agent["cwd"] = str((base / cwd).resolve())  # the file may be saved elsewhere
    if data.get("defaults", {}).get("cwd") and not Path(data["defaults"]["cwd"]).is_absolute():
        data["defaults"]["cwd"] = str((base / data["defaults"]["cwd"]).resolve())
    elif "cwd" not in data.get("defaults", {}):
        data.setdefault("defaults", {})["cwd"] = str(base.resolve())
    specs = {s.name: s for s in fleet.loaded.agents()}
    focus = {n: a.focus for n, a in fleet.agents.items() if a.focus != specs[n].focus}
    if focus:
        data["focus"] = focus
    tasks: dict[str, list[dict[str, Any]]] = {}
    for name in fleet.agents:
        for t in fleet.store.tasks(name):
            if t["status"] in OPEN_TASK:
                row = {"spec": t["spec"], "verify": t["verify"], "judge": t["judge"],
                       "judge_command": t["judge_command"], "max_rounds": t["max_rounds"],
                       "max_minutes": t["max_minutes"],
                       "review_on_idle": bool(t["review_on_idle"]),
                       "verify_timeout": t["verify_timeout"]}
                tasks.setdefault(name, []).append({k: v for k, v in row.items() if v != ""})
    if tasks:
        data["tasks"] = tasks
    reminders = []
    for r in fleet.store.reminders():
        spec: dict[str, Any] = {"to": r["target"]}
        if r["kind"] == "at":
            spec["at"] = r["at"]
        else:
            spec[str(r["kind"])] = _duration(float(str(r["period"])))
        if r.get("action") == "fresh":
            spec["action"] = "fresh"
        else:
            spec["skill" if r["skill"] else "text"] = r["skill"] or r["text"]
        reminders.append(spec)
    data["reminders"] = reminders
    if not reminders:
        data.pop("reminders")
    return data


def save_layout(fleet: Fleet, name: str, force: bool = False) -> Path:
    if not AGENT_NAME.match(name):
        raise ConfigError(f"layout name {name!r}: letters, digits, '.', '_', '-'")
    here = fleet.loaded.path.parent
    if here.name == "layouts" and os.access(here, os.W_OK):
        folder = here
    else:
        folder = layout_dirs()[-1]
        folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    if path.exists() and not force and path.resolve() != fleet.loaded.path.resolve():
        raise ConfigError(f"{path} exists: choose another name, or save with --force")
    text = dumps(layout_data(fleet, name),
                 header=f"# saved by `swarm save` from fleet {fleet.name!r}")
    parse_layout(path, text)  # never write a file that would not load back
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
