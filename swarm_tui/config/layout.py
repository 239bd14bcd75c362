"""Layout files: a fleet described in TOML, validated strictly.

A layout names the fleet and its agents. Every problem in a file is reported as one line
that names the file and the field, so a user can fix them all in one pass.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from swarm_tui.config.hosts import HOST_NAME, LOCAL, HostSpec, expand_range
from swarm_tui.config.names import POOLS, pool
from swarm_tui.config.work import ReminderSpec, TaskSpec
from swarm_tui.errors import ConfigError

CliName = Literal[
    "mock", "generic", "claude", "codex", "cursor", "gemini", "aider", "opencode", "copilot"]
AGENT_NAME = re.compile(r"^[^\W\d_][\w.-]{0,31}$")
ROLE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentDefaults(_Strict):
    """Values every agent takes unless it sets its own."""

    cli: CliName = Field("mock", description="Which agent CLI adapter launches and reads it.")
    model: str = Field("", description="Model name passed to the CLI (empty: the CLI's default).")
    role: str = Field("worker", description="A role name; `swarm send --role` targets it.")
    cwd: str = Field("", description="Working directory (relative to the layout file).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    command: str = Field("", description="Command line for cli='generic' agents.")


class AgentSpec(_Strict):
    """One agent: a named CLI session in its own tmux window."""

    name: str = Field(description="Unique name, e.g. Gauss; shown in the sidebar, used by send.")
    cli: CliName | None = Field(None, description="Agent CLI adapter (defaults.cli if unset).")
    model: str | None = Field(None, description="Model name (defaults.model if unset).")
    role: str | None = Field(None, description="Role (defaults.role if unset).")
    focus: str = Field("", description="The agent's one focus label, shown in the sidebar.")
    prompt: str = Field("", description="First message injected once the agent is ready.")
    command: str = Field("", description="Command line for cli='generic' (run by the shell); "
                         "for other CLIs, the executable's words in place of its usual name.")
    args: list[str] = Field(default_factory=list, description="Extra arguments for the CLI.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(None, description="Working directory (defaults.cwd if unset).")
    host: str = Field(LOCAL, description="Which host runs it: 'local' or a key of [hosts].")
    gpus: str = Field("", description="CUDA_VISIBLE_DEVICES for this agent, e.g. '0' or '2,3'.")
    hooks: bool = Field(False, description="Let swarm wire the CLI's own hooks / notify to "
                        "`swarm hook` (Claude Code, Codex) for exact turn-end signals.")
    family: str = Field("", description="Model family (anthropic, openai, google ...); "
                        "default: the CLI's. A judge of the same family gets a warning.")
    tasks: list[TaskSpec] = Field(default_factory=list,
                                  description="The agent's tasks, in order.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not AGENT_NAME.match(v):
            raise ValueError(
                "must start with a letter and hold only letters, digits, '.', '_' or '-' "
                "(at most 32)"
            )
        return v

    @field_validator("role")
    @classmethod
    def _role(cls, v: str | None) -> str | None:
        if v is not None and not ROLE_NAME.match(v):
            raise ValueError("must be lower-case letters, digits, '_' or '-'")
        return v


class GroupSpec(_Strict):
    """Many agents at once: `per_host` agents on each of `hosts`, named from a pool."""

    hosts: list[str] = Field(description="Host keys (or ranges such as node[01-16]).")
    per_host: int = Field(ge=1, le=64, description="Agents on each host.")
    names: str | list[str] = Field(
        "mathematicians",
        description="A name pool ('mathematicians', 'nba') or an explicit list of names.")
    cli: CliName | None = None
    model: str | None = None
    role: str | None = None
    focus: str = ""
    prompt: str = ""
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    gpus_per_agent: int = Field(
        0, ge=0, le=64,
        description="Pin each agent to this many GPUs (CUDA_VISIBLE_DEVICES); 0: no pinning.")

    @field_validator("names")
    @classmethod
    def _names(cls, v: str | list[str]) -> str | list[str]:
        if isinstance(v, str) and v not in POOLS:
            raise ValueError(f"unknown name pool {v!r} (pools: {', '.join(sorted(POOLS))})")
        return v


class ResolvedAgent(_Strict):
    """An agent with the layout's defaults applied and paths made absolute."""

    name: str
    cli: CliName
    model: str
    role: str
    focus: str
    prompt: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    index: int
    host: str = LOCAL
    gpus: str = ""
    hooks: bool = False
    family: str = ""
    tasks: tuple[TaskSpec, ...] = ()


class Layout(_Strict):
    """A fleet: its name and its agents, in tile order."""

    name: str = Field("", description="Fleet name (defaults to the file's stem).")
    description: str = Field("", description="One line shown by `swarm layouts`.")
    defaults: AgentDefaults = Field(default_factory=AgentDefaults)  # type: ignore[arg-type]
    hosts: dict[str, HostSpec] = Field(
        default_factory=dict,
        description="Remote nodes by key; a key may be a range such as \"node[01-16]\".")
    agents: list[AgentSpec] = Field(default_factory=list, description="Agents, in tile order.")
    groups: list[GroupSpec] = Field(default_factory=list,
                                    description="Groups of agents, after `agents`.")
    reminders: list[ReminderSpec] = Field(default_factory=list,
                                          description="Reminder timers.")
    focus: dict[str, str] = Field(default_factory=dict, description="Focus labels by agent "
                                  "name, over the agents' own (`swarm save` writes these).")
    tasks: dict[str, list[TaskSpec]] = Field(default_factory=dict, description="More tasks "
                                             "by agent name, after the agents' own.")

    @model_validator(mode="after")
    def _unique_and_complete(self) -> Layout:
        problems: list[str] = []  # every problem, one line each, not just the first
        if self.name and not AGENT_NAME.match(self.name):
            problems.append("name: must start with a letter; letters, digits, '.', '_', '-'")
        try:
            hosts = self.host_table()
        except ValueError as exc:
            problems.append(str(exc))
            hosts = {}
        if not self.agents and not self.groups:
            problems.append("agents: a layout needs at least one agent (or a group)")
        seen: set[str] = set()
        for i, agent in enumerate(self.agents):
            if agent.name.casefold() in seen:
                problems.append(f"agents[{i}].name: duplicate agent name {agent.name!r}")
            seen.add(agent.name.casefold())
            if agent.host != LOCAL and agent.host not in hosts:
                problems.append(f"agents[{i}].host: unknown host {agent.host!r} "
                                f"(hosts: {', '.join([LOCAL, *hosts])})")
            if (agent.cli or self.defaults.cli) == "generic" and not (
                    agent.command or self.defaults.command):
                problems.append(f"agents[{i}].command: cli 'generic' needs a command to run")
        for g, group in enumerate(self.groups):
            for h in group.hosts:
                try:
                    names = [n for n, _ in expand_range(h)]
                except ValueError as exc:
                    problems.append(f"groups[{g}].hosts: {exc}")
                    continue
                problems += [f"groups[{g}].hosts: unknown host {n!r}"
                             for n in names if n != LOCAL and n not in hosts]
            if (group.cli or self.defaults.cli) == "generic" and not (
                    group.command or self.defaults.command):
                problems.append(f"groups[{g}].command: cli 'generic' needs a command to run")
        if not problems:
            try:  # group names: an exhausted pool, a bad listed name
                names = {n.casefold() for n, *_ in self._expand()}
                problems += [f"{table}.{key}: no agent named {key!r} in this layout"
                             for table, mapping in (("focus", self.focus),
                                                    ("tasks", self.tasks))
                             for key in mapping if key.casefold() not in names]
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def host_table(self) -> dict[str, HostSpec]:
        """Host keys with ranges expanded: `node[01-16]` becomes node01 ... node16."""
        out: dict[str, HostSpec] = {}
        for key, spec in self.hosts.items():
            try:
                expanded = expand_range(key)
            except ValueError as exc:
                raise ValueError(f"hosts: {exc}") from None
            for name, number in expanded:
                if not HOST_NAME.match(name) or name == LOCAL:
                    raise ValueError(f"hosts.{key}: {name!r} is not a usable host key")
                ssh = spec.ssh.replace("{}", number) if number else spec.ssh
                out[name] = spec.model_copy(update={"ssh": ssh})
        return out

    def _expand(self) -> list[tuple[str, AgentSpec | GroupSpec, str, int]]:
        """(name, spec, host, index on host) for every agent, deterministic order."""
        out: list[tuple[str, AgentSpec | GroupSpec, str, int]] = []
        taken: set[str] = set()
        per_host: dict[str, int] = {}
        for a in self.agents:
            taken.add(a.name.casefold())
            out.append((a.name, a, a.host, per_host.get(a.host, 0)))
            per_host[a.host] = per_host.get(a.host, 0) + 1
        for g, group in enumerate(self.groups):
            source = pool(group.names) if isinstance(group.names, str) else group.names
            names = iter(n for n in source if n.casefold() not in taken)
            hosts = [n for h in group.hosts for n, _ in expand_range(h)]
            for host in hosts:
                for _ in range(group.per_host):
                    name = next(names, None)
                    if name is None:
                        what = group.names if isinstance(group.names, str) else "names"
                        raise ValueError(
                            f"groups[{g}].names: {what} has too few names for "
                            f"{len(hosts) * group.per_host} agents; use another pool or "
                            "list more names")
                    if not AGENT_NAME.match(name):
                        raise ValueError(f"groups[{g}].names: {name!r} is not a valid name")
                    taken.add(name.casefold())
                    out.append((name, group, host, per_host.get(host, 0)))
                    per_host[host] = per_host.get(host, 0) + 1
        return out

    def resolved(self, base: Path) -> list[ResolvedAgent]:
        d = self.defaults
        out = []
        group_index: dict[tuple[int, str], int] = {}
        for i, (name, a, host, _) in enumerate(self._expand()):
            cwd = a.cwd if a.cwd is not None else d.cwd
            env = {**d.env, **a.env}
            gpus = ""
            if isinstance(a, AgentSpec):
                gpus = a.gpus
            elif a.gpus_per_agent:
                k = group_index.get((id(a), host), 0)
                group_index[(id(a), host)] = k + 1
                n = a.gpus_per_agent
                gpus = ",".join(str(k * n + j) for j in range(n))
            if gpus:
                env["CUDA_VISIBLE_DEVICES"] = gpus
            local = host == LOCAL
            out.append(
                ResolvedAgent(
                    name=name,
                    cli=a.cli or d.cli,
                    model=a.model if a.model is not None else d.model,
                    role=a.role or d.role,
                    focus=self.focus.get(name, a.focus),
                    prompt=a.prompt,
                    command=a.command or d.command,
                    args=tuple(a.args),
                    env=env,
                    cwd=(str((base / cwd).resolve()) if cwd else str(base.resolve()))
                    if local else (cwd or ""),
                    index=i,
                    host=host,
                    gpus=gpus,
                    hooks=a.hooks if isinstance(a, AgentSpec) else False,
                    family=a.family if isinstance(a, AgentSpec) else "",
                    tasks=(tuple(a.tasks) if isinstance(a, AgentSpec) else ())
                    + tuple(self.tasks.get(name, ())),
                )
            )
        return out


class LoadedLayout(BaseModel):
    """A validated layout and where it came from."""

    model_config = ConfigDict(frozen=True)

    path: Path
    layout: Layout

    @property
    def fleet(self) -> str:
        return self.layout.name or self.path.stem

    def agents(self) -> list[ResolvedAgent]:
        return self.layout.resolved(self.path.parent)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _problems(path: Path, err: ValidationError) -> list[str]:
    lines = []
    for e in err.errors():
        msg = e["msg"].removeprefix("Value error, ")
        loc = _loc(tuple(e["loc"]))
        if loc == "(top level)":
            # model-level checks name their own fields, one problem per line
            lines += [f"{path}: {line}" for line in msg.splitlines()]
        elif e["type"] == "extra_forbidden":
            lines.append(f"{path}: {loc}: unknown field (check the spelling; `swarm schema`)")
        else:
            lines.append(f"{path}: {loc}: {msg}")
    return lines


def parse_layout(path: Path, text: str) -> LoadedLayout:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        layout = Layout.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problems(path, exc))) from None
    return LoadedLayout(path=path, layout=layout)


def load_layout(path: Path) -> LoadedLayout:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such layout file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_layout(path, text)


def layout_dirs() -> list[Path]:
    import os

    dirs = [Path.cwd() / "layouts", Path(__file__).resolve().parents[2] / "layouts"]
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs.append(Path(xdg) / "swarm" / "layouts")
    return dirs


def resolve_layout(name_or_path: str) -> Path:
    """A path as given, or a layout name looked up in the layout directories."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or "/" in name_or_path:
        return p
    for d in layout_dirs():
        cand = d / f"{name_or_path}.toml"
        if cand.exists():
            return cand
    return p.with_suffix(".toml")


def json_schema() -> str:
    return json.dumps(Layout.model_json_schema(), indent=2)
