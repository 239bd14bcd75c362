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
from swarm_tui.config.layout_checks import (
    LayoutProblems,
    Problem,
    _table,
    cross_problems,
)
from swarm_tui.config.names import POOLS, pool
from swarm_tui.config.notify import NotifySpec
from swarm_tui.config.toml_lines import Loc, dotted, line_numbers, line_of
from swarm_tui.config.work import ReminderSpec, TaskSpec
from swarm_tui.errors import ConfigError

CliName = Literal[
    "mock", "generic", "claude", "codex", "cursor", "gemini", "aider", "opencode", "copilot"
]
AGENT_NAME = re.compile(r"^[^\W\d_][\w.-]{0,31}$")
ROLE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# what an agent may do to the fleet or to other agents beyond messaging them; by default an
# agent changes only its own focus and tasks and cannot stop the fleet
Permission = Literal["down", "stop", "focus", "tasks", "merge"]
MAY = (
    "What this agent may do beyond its own affairs: 'down' (stop the fleet), 'stop' (stop "
    "the engine, agents keep running), 'focus' (set "
    "other agents' focus labels), 'tasks' (give other agents tasks, e.g. a planner), "
    "'merge' (merge agents' worktree branches into their base)"
)
WORKTREE = (
    "Run the agent in a git worktree of its own, on branch swarm/<fleet>/<agent> "
    "made from `base` in `repo` (on the agent's host)"
)
REPO = "The git repository its worktree branches from (relative to the layout file)."
BASE = "The branch (or commit) its worktree starts from; empty: the repo's current branch."
JUDGE_DIFF = (
    "Characters of the agent's diff a judge's review prompt carries (the rest is "
    "left out, and said so); 0: the file list only."
)
HOOKS = (
    "Let swarm wire the CLI's own hooks / notify to `swarm hook` (Claude Code, Codex): "
    "exact turn-end signals, and the conversation's id, so a node that reboots resumes it."
)
TALKS_TO = (
    "Agents (by name) and roles this agent may message with `swarm send`; unset: "
    "every agent. The human and swarm itself can always message it."
)


class AgentDefaults(_Strict):
    """Values every agent takes unless it sets its own."""

    cli: CliName = Field("mock", description="Which agent CLI adapter launches and reads it.")
    model: str = Field("", description="Model name passed to the CLI (empty: the CLI's default).")
    role: str = Field("worker", description="A role name; `swarm send --role` targets it.")
    cwd: str = Field("", description="Working directory (relative to the layout file).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    command: str = Field(
        "",
        description="Command line for cli='generic' (run by the shell); "
        "for other CLIs, the executable's words in place of its usual name.",
    )
    may: list[Permission] = Field(default_factory=list, description=MAY)
    talks_to: list[str] | None = Field(None, description=TALKS_TO)
    worktree: bool = Field(False, description=WORKTREE)
    repo: str = Field("", description=REPO)
    base: str = Field("", description=BASE)
    judge_diff: int = Field(20_000, ge=0, le=2_000_000, description=JUDGE_DIFF)
    hooks: bool = Field(False, description=HOOKS)


class Changes(_Strict):
    """Fields an agent or a group may state over the defaults' (its worktree, its hooks);
    unset: the defaults'."""

    worktree: bool | None = Field(None, description=WORKTREE)
    repo: str | None = Field(None, description=REPO)
    base: str | None = Field(None, description=BASE)
    judge_diff: int | None = Field(None, ge=0, le=2_000_000, description=JUDGE_DIFF)
    hooks: bool | None = Field(None, description=HOOKS + " (defaults.hooks if unset)")


class AgentSpec(Changes):
    """One agent: a named CLI session in its own tmux window."""

    name: str = Field(description="Unique name, e.g. Gauss; shown in the sidebar, used by send.")
    cli: CliName | None = Field(None, description="Agent CLI adapter (defaults.cli if unset).")
    model: str | None = Field(None, description="Model name (defaults.model if unset).")
    role: str | None = Field(None, description="Role (defaults.role if unset).")
    focus: str = Field("", description="The agent's one focus label, shown in the sidebar.")
    prompt: str = Field("", description="First message injected once the agent is ready.")
    command: str = Field(
        "",
        description="Command line for cli='generic' (run by the shell); "
        "for other CLIs, the executable's words in place of its usual name.",
    )
    args: list[str] = Field(default_factory=list, description="Extra arguments for the CLI.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(None, description="Working directory (defaults.cwd if unset).")
    host: str = Field(LOCAL, description="Which host runs it: 'local' or a key of [hosts].")
    gpus: str = Field("", description="CUDA_VISIBLE_DEVICES for this agent, e.g. '0' or '2,3'.")
    family: str = Field(
        "",
        description="Model family (anthropic, openai, google ...); "
        "default: the CLI's. A judge of the same family gets a warning.",
    )
    tasks: list[TaskSpec] = Field(default_factory=list, description="The agent's tasks, in order.")
    may: list[Permission] | None = Field(None, description=MAY + " (defaults.may if unset)")
    talks_to: list[str] | None = Field(None, description=TALKS_TO + " (defaults.talks_to if unset)")

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


class GroupSpec(Changes):
    """Many agents at once: `per_host` agents on each of `hosts`, named from a pool."""

    hosts: list[str] = Field(description="Host keys (or ranges such as node[01-16]).")
    per_host: int = Field(ge=1, le=64, description="Agents on each host.")
    names: str | list[str] = Field(
        "mathematicians",
        description="A name pool ('mathematicians', 'nba') or an explicit list of names.",
    )
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
        0,
        ge=0,
        le=64,
        description="Pin each agent to this many GPUs (CUDA_VISIBLE_DEVICES); 0: no pinning.",
    )

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
    may: tuple[Permission, ...] = ()
    talks_to: tuple[str, ...] | None = None  # names and roles; None: everyone
    worktree: bool = False
    repo: str = ""  # absolute for a local agent, as written for a remote one
    base: str = ""
    judge_diff: int = 20_000


class Layout(_Strict):
    """A fleet: its name and its agents, in tile order."""

    name: str = Field("", description="Fleet name (defaults to the file's stem).")
    description: str = Field("", description="One line shown by `swarm layouts`.")
    defaults: AgentDefaults = Field(default_factory=AgentDefaults)  # type: ignore[arg-type]
    hosts: dict[str, HostSpec] = Field(
        default_factory=dict,
        description='Remote nodes by key; a key may be a range such as "node[01-16]".',
    )
    agents: list[AgentSpec] = Field(default_factory=list, description="Agents, in tile order.")
    groups: list[GroupSpec] = Field(
        default_factory=list, description="Groups of agents, after `agents`."
    )
    reminders: list[ReminderSpec] = Field(default_factory=list, description="Reminder timers.")
    focus: dict[str, str] = Field(
        default_factory=dict,
        description="Focus labels by agent name, over the agents' own (`swarm save` writes these).",
    )
    tasks: dict[str, list[TaskSpec]] = Field(
        default_factory=dict, description="More tasks by agent name, after the agents' own."
    )
    notify: NotifySpec = Field(
        default_factory=NotifySpec,  # type: ignore[arg-type]
        description="Alerts from the engine: a webhook, the desktop.",
    )

    @field_validator("name")
    @classmethod
    def _fleet_name(cls, v: str) -> str:
        if v and not AGENT_NAME.match(v):
            raise ValueError("must start with a letter; letters, digits, '.', '_', '-'")
        return v

    @model_validator(mode="after")
    def _unique_and_complete(self) -> Layout:
        # every problem, one each, not just the first; parse_layout adds the file's lines
        problems = cross_problems(self.model_dump())
        if not problems:
            try:  # group names: an exhausted pool, a bad listed name
                names = {n.casefold() for n, *_ in self._expand()}
            except LayoutProblems as exc:
                problems += exc.problems
            else:
                problems += [
                    ((table, key), f"no agent named {key!r} in this layout")
                    for table, mapping in (("focus", self.focus), ("tasks", self.tasks))
                    for key in mapping
                    if key.casefold() not in names
                ]
                problems += self._talks_to_problems(names)
        if problems:
            raise LayoutProblems(problems)
        return self

    def _talks_to_problems(self, names: set[str]) -> list[Problem]:
        """Every `talks_to` entry names an agent or a role of this layout."""
        roles = {
            self.defaults.role,
            *(a.role for a in self.agents if a.role),
            *(g.role for g in self.groups if g.role),
        }
        known = names | {r.casefold() for r in roles}
        where: list[tuple[Loc, list[str] | None]] = [
            (("defaults", "talks_to"), self.defaults.talks_to)
        ]
        where += [(("agents", i, "talks_to"), a.talks_to) for i, a in enumerate(self.agents)]
        return [
            (
                loc,
                f"{entry!r} is neither an agent nor a role of this layout (roles: "
                f"{', '.join(sorted(roles))})",
            )
            for loc, entries in where
            for entry in entries or ()
            if entry.casefold() not in known
        ]

    def host_table(self) -> dict[str, HostSpec]:
        """Host keys with ranges expanded: `node[01-16]` becomes node01 ... node16."""
        out: dict[str, HostSpec] = {}
        for key, spec in self.hosts.items():
            try:
                expanded = expand_range(key)
            except ValueError as exc:
                raise ValueError(f"hosts: {exc}") from None
            if spec.slurm is not None and len(expanded) > 1:
                raise ValueError(
                    f"hosts.{key}: a slurm entry names its nodes itself; give "
                    'it a plain key such as "gpu"'
                )
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
                        raise LayoutProblems(
                            [
                                (
                                    ("groups", g, "names"),
                                    f"{what} has too few names for {len(hosts) * group.per_host} "
                                    "agents; use another pool or list more names",
                                )
                            ]
                        )
                    if not AGENT_NAME.match(name):
                        raise LayoutProblems(
                            [(("groups", g, "names"), f"{name!r} is not a valid name")]
                        )
                    taken.add(name.casefold())
                    out.append((name, group, host, per_host.get(host, 0)))
                    per_host[host] = per_host.get(host, 0) + 1
        return out

    def resolved(self, base: Path) -> list[ResolvedAgent]:
        d = self.defaults
        out = []
        group_index: dict[tuple[int, str], int] = {}
        for i, (name, a, host, _) in enumerate(self._expand()):
            cwd: str | None = a.cwd if a.cwd is not None else d.cwd
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
            worktree = a.worktree if a.worktree is not None else d.worktree
            if worktree and not cwd:
                cwd = None  # unset: the worktree's top, never the layout's folder
            repo = a.repo if a.repo is not None else d.repo
            if repo and local:
                repo = str((base / repo).resolve())
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
                    cwd=""
                    if cwd is None
                    else (
                        (str((base / cwd).resolve()) if cwd else str(base.resolve()))
                        if local
                        else (cwd or "")
                    ),
                    index=i,
                    host=host,
                    gpus=gpus,
                    hooks=a.hooks if a.hooks is not None else d.hooks,
                    family=a.family if isinstance(a, AgentSpec) else "",
                    tasks=(tuple(a.tasks) if isinstance(a, AgentSpec) else ())
                    + tuple(self.tasks.get(name, ())),
                    may=tuple(a.may if isinstance(a, AgentSpec) and a.may is not None else d.may),
                    talks_to=_talks_to(
                        a.talks_to
                        if isinstance(a, AgentSpec) and a.talks_to is not None
                        else d.talks_to
                    ),
                    worktree=worktree,
                    repo=repo,
                    base=a.base if a.base is not None else d.base,
                    judge_diff=a.judge_diff if a.judge_diff is not None else d.judge_diff,
                )
            )
        return out


def _talks_to(entries: list[str] | None) -> tuple[str, ...] | None:
    return None if entries is None else tuple(e.casefold() for e in entries)


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


def _where(loc: Loc, data: dict[str, Any]) -> str:
    """A field as a user finds it: an agent by its name, anything else by its path."""
    agents = data.get("agents")
    if (
        len(loc) >= 2
        and loc[0] == "agents"
        and isinstance(loc[1], int)
        and isinstance(agents, list)
        and loc[1] < len(agents)
    ):
        name = _table(agents[loc[1]]).get("name")
        if isinstance(name, str) and name:
            return f"agent {name!r}" + (f": {dotted(loc[2:])}" if loc[2:] else "")
    return dotted(loc)


def _problems(path: Path, text: str, data: dict[str, Any], err: ValidationError) -> list[str]:
    found: list[Problem] = []
    checked = False  # did the layout's own cross-field check run (all fields valid)?
    for e in err.errors():
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, LayoutProblems):
            found += [(tuple(e["loc"]) + loc, msg) for loc, msg in cause.problems]
            checked = True
        elif e["type"] == "extra_forbidden":
            found.append((tuple(e["loc"]), "unknown field (check the spelling; `swarm schema`)"))
        else:
            found.append((tuple(e["loc"]), e["msg"].removeprefix("Value error, ")))
    if not checked:
        found += cross_problems(data)
    index = line_numbers(text)
    lines: list[tuple[int, str]] = []
    for loc, msg in found:
        n = line_of(loc, index)
        at = f"{path}:{n}" if n else f"{path}"
        lines.append((n or 1 << 30, f"{at}: {_where(loc, data)}: {msg}"))
    return [line for _, line in sorted(lines, key=lambda x: x[0])]


def parse_layout(path: Path, text: str) -> LoadedLayout:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        layout = Layout.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problems(path, text, data, exc))) from None
    return LoadedLayout(path=path, layout=layout)


def load_layout(path: Path) -> LoadedLayout:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such layout file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_layout(path, text)


SHIPPED_LAYOUTS = Path(__file__).resolve().parents[2] / "layouts"  # in swarm's checkout


def user_layouts_dir() -> Path:
    """Where the user's own layouts live: $XDG_CONFIG_HOME/swarm/layouts."""
    import os

    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "swarm" / "layouts"


def is_shipped(path: Path) -> bool:
    """A layout that comes with swarm (its checkout's layouts/): never written to."""
    return path.resolve().parent == SHIPPED_LAYOUTS.resolve()


def layout_dirs() -> list[Path]:
    """Where names are looked up, first match wins: the project's layouts/ (the current
    directory's), the user's, then the shipped ones (a user's saved `demo` shadows swarm's)."""
    project = Path.cwd() / "layouts"
    dirs = [] if project.resolve() == SHIPPED_LAYOUTS.resolve() else [project]
    return [*dirs, user_layouts_dir(), SHIPPED_LAYOUTS]


def resolve_layout(name_or_path: str) -> Path:
    """A path as given, or a layout name looked up in the layout directories."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or "/" in name_or_path:
        return p
    for d in layout_dirs():
        cand = d / f"{name_or_path}.toml"
        if cand.exists():
            return cand
    here = p.with_suffix(".toml")
    if here.exists():
        return here
    looked = ", ".join(str(d) for d in [Path("."), *layout_dirs()])
    raise ConfigError(
        f"no layout named {name_or_path!r} (looked in {looked}; `swarm layouts` "
        "lists them, or give a file's path)"
    )


def json_schema() -> str:
    return json.dumps(Layout.model_json_schema(), indent=2)
