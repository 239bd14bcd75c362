"""Checks of a layout across its fields, on its raw data (unique names, known hosts, a command
for generic agents, a repository for worktrees): they run even when some fields are wrong, so
one pass reports every problem."""

from __future__ import annotations

from typing import Any

from swarm_tui.config.hosts import HOST_NAME, LOCAL, expand_range
from swarm_tui.config.toml_lines import Loc, dotted

Problem = tuple[Loc, str]  # where (as pydantic names it) and what is wrong


class LayoutProblems(ValueError):
    """Every problem a layout's cross-field checks found, each with where it is."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(f"{dotted(loc)}: {msg}" for loc, msg in problems))


def _host_keys(hosts: object) -> tuple[set[str], list[Problem]]:
    """The host keys of a raw `[hosts]` table, ranges expanded, and what is wrong with them."""
    names: set[str] = set()
    problems: list[Problem] = []
    for key in hosts if isinstance(hosts, dict) else {}:
        try:
            expanded = expand_range(str(key))
        except ValueError as exc:
            problems.append((("hosts", key), str(exc)))
            continue
        for name, _ in expanded:
            if not HOST_NAME.match(name) or name == LOCAL:
                problems.append((("hosts", key), f"{name!r} is not a usable host key"))
            names.add(name)
    return names, problems


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _inherit(own: dict[str, Any], defaults: dict[str, Any], key: str, empty: object) -> Any:
    value = own.get(key)
    return defaults.get(key, empty) if value is None else value


def _worktree_problems(where: Loc, own: dict[str, Any], defaults: dict[str, Any]) -> list[Problem]:
    """`worktree = true` needs the repository it branches from."""
    if _inherit(own, defaults, "worktree", False) is True and not _inherit(
        own, defaults, "repo", ""
    ):
        return [
            (
                (*where, "repo"),
                "worktree = true needs `repo`: the git repository the "
                "agent's worktree branches from (here or in [defaults])",
            )
        ]
    return []


def cross_problems(data: dict[str, Any]) -> list[Problem]:
    """Checks across fields (unique names, known hosts, a command for generic agents) on a
    layout's raw data: they run even when some fields are wrong, so one pass shows all."""
    hosts, problems = _host_keys(data.get("hosts"))
    defaults = _table(data.get("defaults"))
    agents, groups = data.get("agents", []), data.get("groups", [])
    if agents == [] and groups == []:
        problems.append((("agents",), "a layout needs at least one agent (or a group)"))
    seen: set[str] = set()
    for i, agent in enumerate(agents if isinstance(agents, list) else []):
        if not isinstance(agent, dict):
            continue
        name = agent.get("name")
        if isinstance(name, str):
            if name.casefold() in seen:
                problems.append((("agents", i, "name"), f"duplicate agent name {name!r}"))
            seen.add(name.casefold())
        host = agent.get("host", LOCAL)
        if isinstance(host, str) and host != LOCAL and host not in hosts:
            problems.append(
                (
                    ("agents", i, "host"),
                    f"unknown host {host!r} (hosts: {', '.join([LOCAL, *sorted(hosts)])})",
                )
            )
        if (agent.get("cli") or defaults.get("cli")) == "generic" and not (
            agent.get("command") or defaults.get("command")
        ):
            problems.append((("agents", i, "command"), "cli 'generic' needs a command to run"))
        problems += _worktree_problems(("agents", i), agent, defaults)
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, dict):
            continue
        group_hosts = group.get("hosts")
        for h in group_hosts if isinstance(group_hosts, list) else []:
            try:
                names = [n for n, _ in expand_range(str(h))]
            except ValueError as exc:
                problems.append((("groups", g, "hosts"), str(exc)))
                continue
            problems += [
                (("groups", g, "hosts"), f"unknown host {n!r}")
                for n in names
                if n != LOCAL and n not in hosts
            ]
        if (group.get("cli") or defaults.get("cli")) == "generic" and not (
            group.get("command") or defaults.get("command")
        ):
            problems.append((("groups", g, "command"), "cli 'generic' needs a command to run"))
        problems += _worktree_problems(("groups", g), group, defaults)
    return problems
