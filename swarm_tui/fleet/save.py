"""`swarm save`: write the running fleet as a layout that `swarm up` brings back exactly —
hosts, agents and groups (kept short), CLIs, models, roles, focus labels, open tasks,
reminders, tile order.

A saved layout never replaces a file without `force`, and never goes into swarm's own
checkout: a fleet started from a shipped layout (`layouts/demo.toml`) is saved to the user's
layouts directory, which `swarm layouts` lists and `swarm up NAME` searches before the
shipped one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm_tui.config.layout import AGENT_NAME, is_shipped, parse_layout, user_layouts_dir
from swarm_tui.config.toml_out import dumps
from swarm_tui.errors import ConfigError
from swarm_tui.fleet.store import OPEN_TASK, ReminderAction, ReminderKind

if TYPE_CHECKING:
    from swarm_tui.fleet.ports import Saved


def _duration(seconds: float) -> str:
    return (
        f"{seconds / 3600:g}h"
        if seconds % 3600 == 0
        else f"{seconds / 60:g}m"
        if seconds % 60 == 0
        else f"{seconds:g}s"
    )


def _cwd(cwd: str, base: Path, folder: Path) -> str:
    """A relative cwd stays as written when the file stays in its folder; elsewhere it is
    made absolute, so the saved file still points at the same directory."""
    if Path(cwd).is_absolute() or base.resolve() == folder.resolve():
        return cwd
    return str((base / cwd).resolve())


def layout_data(fleet: Saved, name: str, folder: Path | None = None) -> dict[str, Any]:
    """The fleet as layout data, to be written into `folder` (default: the user's)."""
    layout = fleet.loaded.layout
    data = layout.model_dump(mode="json", exclude_defaults=True)
    data["name"] = name
    data.pop("focus", None)
    data.pop("tasks", None)
    for agent in data.get("agents", []):
        agent.pop("tasks", None)  # written below from the journal: open tasks only
    base = fleet.loaded.path.parent
    folder = folder or user_layouts_dir()
    # a relative cwd is the layout's directory on this machine, the home directory on a node
    for key in ("cwd", "repo"):  # the same for a worktree's repository
        for item in data.get("agents", []):
            if item.get(key) and item.get("host", "local") == "local":
                item[key] = _cwd(item[key], base, folder)
        for item in data.get("groups", []):
            if item.get(key) and item["hosts"] == ["local"]:
                item[key] = _cwd(item[key], base, folder)
    defaults = data.setdefault("defaults", {})
    if defaults.get("repo") and not layout.hosts:
        defaults["repo"] = _cwd(defaults["repo"], base, folder)
    if defaults.get("cwd") and not layout.hosts:
        defaults["cwd"] = _cwd(defaults["cwd"], base, folder)
    elif not layout.hosts and base.resolve() != folder.resolve():
        defaults["cwd"] = str(base.resolve())  # agents ran in the layout's own directory
    if not defaults:
        data.pop("defaults")
    specs = {s.name: s for s in fleet.loaded.agents()}
    focus = {n: a.focus for n, a in fleet.agents.items() if a.focus != specs[n].focus}
    if focus:
        data["focus"] = focus
    tasks: dict[str, list[dict[str, Any]]] = {}
    for name in fleet.agents:
        for t in fleet.store.tasks(name):
            if t.status in OPEN_TASK:
                row = {
                    "spec": t.spec,
                    "verify": t.verify,
                    "judge": t.judge,
                    "judge_command": t.judge_command,
                    "max_rounds": t.max_rounds,
                    "max_minutes": t.max_minutes,
                    "review_on_idle": t.review_on_idle,
                    "verify_timeout": t.verify_timeout,
                    # the same fleet loading this file finds the task in its journal
                    "journal_id": t.id,
                }
                tasks.setdefault(name, []).append({k: v for k, v in row.items() if v != ""})
    if tasks:
        data["tasks"] = tasks
    reminders = []
    for r in fleet.store.reminders():
        spec: dict[str, Any] = {"to": r.target}
        if r.kind == ReminderKind.AT:
            spec["at"] = r.at
        else:
            spec[r.kind.value] = _duration(r.period)
        if r.action == ReminderAction.FRESH:
            spec["action"] = ReminderAction.FRESH.value
        else:
            spec["skill" if r.skill else "text"] = r.skill or r.text
        reminders.append(spec)
    data["reminders"] = reminders
    if not reminders:
        data.pop("reminders")
    return data


def save_folder(fleet: Saved) -> Path:
    """The project's layouts/ the fleet came from, if writable; else the user's directory.
    Never swarm's own layouts/: those are shipped files with comments a user keeps."""
    here = fleet.loaded.path.parent
    if not is_shipped(fleet.loaded.path) and here.name == "layouts" and os.access(here, os.W_OK):
        return here
    return user_layouts_dir()


def save_layout(fleet: Saved, name: str, force: bool = False) -> Path:
    """Write the fleet as `NAME.toml`; refuses an existing file unless `force`."""
    if not AGENT_NAME.match(name):
        raise ConfigError(f"layout name {name!r}: letters, digits, '.', '_', '-'")
    folder = save_folder(fleet)
    path = folder / f"{name}.toml"
    if path.exists() and not force:
        raise ConfigError(
            f"{path} exists: choose another name, or overwrite it with `swarm save {name} --force`"
        )
    text = dumps(
        layout_data(fleet, name, folder),
        header=f"# saved by `swarm save` from fleet {fleet.name!r}",
    )
    parse_layout(path, text)  # never write a file that would not load back
    if folder == user_layouts_dir():
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.mkdir(exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    tmp.replace(path)
    return path
