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

from swarm_tui.errors import ConfigError

CliName = Literal["mock", "generic"]
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


class AgentSpec(_Strict):
    """One agent: a named CLI session in its own tmux window."""

    name: str = Field(description="Unique name, e.g. Gauss; shown in the sidebar, used by send.")
    cli: CliName | None = Field(None, description="Agent CLI adapter (defaults.cli if unset).")
    model: str | None = Field(None, description="Model name (defaults.model if unset).")
    role: str | None = Field(None, description="Role (defaults.role if unset).")
    focus: str = Field("", description="The agent's one focus label, shown in the sidebar.")
    prompt: str = Field("", description="First message injected once the agent is ready.")
    command: str = Field("", description="Command line for cli='generic' (run by the shell).")
    args: list[str] = Field(default_factory=list, description="Extra arguments for the CLI.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(None, description="Working directory (defaults.cwd if unset).")

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


class Layout(_Strict):
    """A fleet: its name and its agents, in tile order."""

    name: str = Field("", description="Fleet name (defaults to the file's stem).")
    description: str = Field("", description="One line shown by `swarm layouts`.")
    defaults: AgentDefaults = Field(default_factory=AgentDefaults)  # type: ignore[arg-type]
    agents: list[AgentSpec] = Field(min_length=1, description="The agents, in tile order.")

    @model_validator(mode="after")
    def _unique_and_complete(self) -> Layout:
        seen: set[str] = set()
        for i, agent in enumerate(self.agents):
            key = agent.name.casefold()
            if key in seen:
                raise ValueError(f"agents[{i}].name: duplicate agent name {agent.name!r}")
            seen.add(key)
            if (agent.cli or self.defaults.cli) == "generic" and not agent.command:
                raise ValueError(f"agents[{i}].command: cli 'generic' needs a command to run")
        if self.name and not AGENT_NAME.match(self.name):
            raise ValueError("name: must start with a letter; letters, digits, '.', '_', '-'")
        return self

    def resolved(self, base: Path) -> list[ResolvedAgent]:
        d = self.defaults
        out = []
        for i, a in enumerate(self.agents):
            cwd = a.cwd if a.cwd is not None else d.cwd
            out.append(
                ResolvedAgent(
                    name=a.name,
                    cli=a.cli or d.cli,
                    model=a.model if a.model is not None else d.model,
                    role=a.role or d.role,
                    focus=a.focus,
                    prompt=a.prompt,
                    command=a.command,
                    args=tuple(a.args),
                    env={**d.env, **a.env},
                    cwd=str((base / cwd).resolve()) if cwd else str(base.resolve()),
                    index=i,
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
        if ":" in msg and loc == "(top level)":
            # model-level checks name their own field: "agents[2].name: duplicate ..."
            lines.append(f"{path}: {msg}")
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
