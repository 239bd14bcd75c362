"""Live reload: edit the running layout file and the fleet follows, in place.

Added agents get windows; removed agents leave the fleet view but keep their windows
(detached, still running: `swarm down` or tmux stops them); agents whose launch changed (CLI,
model, args, env, command) are restarted in their own window; focus labels and roles change
in place; reminders from the layout are replaced. Untouched agents are not disturbed. An
invalid edit is reported (file, field, why) and the last good layout stays in force.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swarm_tui.agents import adapter_for
from swarm_tui.config.layout import LoadedLayout, ResolvedAgent, load_layout
from swarm_tui.errors import ConfigError, SwarmError
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.reminders import new_reminder
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.fleet.worktrees import prepare
from swarm_tui.hosts.slurm import resolved

if TYPE_CHECKING:
    from swarm_tui.fleet.ports import Reloadable

LAUNCH_FIELDS = ("cli", "model", "args", "env", "command", "cwd", "hooks")
WORKTREE_FIELDS = ("worktree", "repo", "base")


async def apply_layout(fleet: Reloadable, new: LoadedLayout) -> list[str]:
    """Bring the running fleet to `new`; returns one line per change made. Every check comes
    before the first change: an edit that cannot be applied changes nothing."""
    problems = []
    if new.fleet != fleet.name:
        problems.append(
            f"name: a running fleet cannot be renamed ({fleet.name!r} -> "
            f"{new.fleet!r}); save it under a new name"
        )
    specs = {s.name: s for s in new.agents()}
    if added_hosts := sorted({s.host for s in specs.values()} - set(fleet.links)):
        problems.append(
            f"hosts: adding a host ({', '.join(added_hosts)}) needs a restart of "
            "swarm (`q`, then `swarm up`); the agents keep running"
        )
    for name, spec in specs.items():
        agent = fleet.agents.get(name)
        if agent is not None and agent.spec.host != spec.host:
            problems.append(
                f"agents: moving {name} to another host needs a new name (or `swarm down` first)"
            )
        if agent is not None and any(
            getattr(agent.spec, f) != getattr(spec, f) for f in WORKTREE_FIELDS
        ):
            problems.append(
                f"agents: {name}'s worktree, repo or base cannot change while it "
                "runs: give it a new name (or `swarm down` first)"
            )
    problems += await _worktree_problems(
        fleet, [s for n, s in specs.items() if n not in fleet.agents and s.worktree]
    )
    if problems:
        raise ConfigError("\n".join(f"{new.path}: {p}" for p in problems))
    changes: list[str] = []
    for name in [n for n in fleet.agents if n not in specs]:
        fleet.remove_agent(fleet.agents[name])
        changes.append(
            f"{name} left the layout: its window keeps running, detached "
            f"(`swarm attach {name}` to see it)"
        )
    ordered: dict[str, Agent] = {}
    for name, spec in specs.items():
        known = fleet.agents.get(name)
        if known is None:
            adapter = adapter_for(spec.cli)
            agent = Agent(
                spec=spec,
                adapter=adapter,
                token=fleet.store.token_for(name),
                focus=spec.focus,
                tracker=StateTracker(adapter, time.monotonic()),
            )
            ordered[name] = agent
            link = fleet.links[spec.host]
            created = True
            if link.connected and link.control is not None:
                created = await fleet.create_window(link, agent)
            fleet.add_agent(agent)
            if spec.prompt and created:
                fleet.send([name], spec.prompt, sender="swarm")
            changes.append(f"{name} joined the fleet on {spec.host}")
            continue
        agent = known
        old = agent.spec
        relaunch = any(getattr(old, f) != getattr(spec, f) for f in LAUNCH_FIELDS)
        agent.spec = spec
        if spec.focus != old.focus and spec.focus:
            fleet.set_focus(name, spec.focus, by="layout")
            changes.append(f"{name}: focus is now {spec.focus!r}")
        if spec.role != old.role:
            changes.append(f"{name}: role is now {spec.role}")
        if relaunch:
            agent.adapter = adapter_for(spec.cli)
            await fleet.restart(agent)
            changes.append(f"{name} restarted with its new launch settings")
        ordered[name] = agent
    fleet.agents.clear()
    fleet.agents.update(ordered)  # the layout's order is the tiles' order
    changes += _reminders(fleet, new)
    fleet.loaded = new
    return changes


async def _worktree_problems(fleet: Reloadable, added: list[ResolvedAgent]) -> list[str]:
    """Agents joining with `worktree = true`: their worktrees can be made (checked on their
    hosts now; a host that is down checks them when it comes back)."""
    problems: list[str] = []
    for host in sorted({s.host for s in added}):
        link = fleet.links.get(host)
        if link is not None and link.connected:
            _, bad = await prepare(
                link.host, fleet.name, [s for s in added if s.host == host], create=False
            )
            problems += [f"agents: {line}" for line in bad]
    return problems


def _reminders(fleet: Reloadable, new: LoadedLayout) -> list[str]:
    wanted = {f"layout:{i}:{r.model_dump_json()}": r for i, r in enumerate(new.layout.reminders)}
    have = {r.key: r for r in fleet.store.reminders() if r.key.startswith("layout:")}
    out = []
    for key, row in have.items():
        if key not in wanted:
            fleet.store.delete_reminder(row.id)
            out.append(f"reminder #{row.id} removed")
    for key, spec in wanted.items():
        if key not in have:
            fleet.store.upsert_reminder(key, new_reminder(spec, fleet.reminders.clock()))
            out.append(f"reminder to {spec.to} added")
    return out


async def watch_layout(fleet: Reloadable, path: Path, catch_up: bool = False) -> None:
    """Follow edits of the layout file (watching its directory: editors save by rename).
    `catch_up`: the watcher is starting again after a failure; an edit saved while it was
    down is applied first (applying an unchanged file changes nothing)."""
    from watchfiles import awatch

    target = path.resolve()
    if catch_up and target.exists():
        await _apply_file(fleet, target)
    async for changes in awatch(target.parent, debounce=300, step=100):
        if not any(Path(p).resolve() == target for _, p in changes):
            continue
        if not target.exists():
            continue  # mid-rename; the next event has the new file
        await _apply_file(fleet, target)
        await asyncio.sleep(0)


async def _apply_file(fleet: Reloadable, target: Path) -> None:
    """The layout file as it is now, applied; a bad one said, the last good one kept."""
    try:
        new = resolved(load_layout(target))  # a Slurm entry: the nodes it holds
        lines = await apply_layout(fleet, new)
    except ConfigError as exc:
        fleet.listener.layout_invalid(str(exc).splitlines())
        fleet.listener.notice(f"layout not applied, the last good one stays: {exc}")
        return
    except SwarmError as exc:
        fleet.listener.layout_invalid(str(exc).splitlines(), partly=True)
        fleet.listener.notice(f"layout partly applied: {exc}")
        return
    for line in lines:
        fleet.listener.notice(line)
    fleet.listener.layout_changed()
