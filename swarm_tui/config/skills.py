"""Skills: reusable prompts as Markdown files with a little front matter.

    ---
    name: judge
    description: Review a worker's claim that its task is done
    when: a worker says it is done
    params: rounds=3, tone=plain
    ---
    The prompt, with {agent}, {focus}, {task} and the parameters filled in.

A broken file is reported (file and problem) and skipped; the others load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from swarm_tui.errors import ConfigError

NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
SKILLS_DIR = Path(__file__).resolve().parents[2] / "skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path
    when: str = ""
    params: dict[str, str | None] = field(default_factory=dict)  # None: required

    def render(self, values: dict[str, str]) -> str:
        """The body with variables filled in; unknown {names} are left as written. A required
        parameter that is not given raises ConfigError."""
        missing = [k for k, v in self.params.items() if v is None and k not in values]
        if missing:
            raise ConfigError(
                f"skill {self.name}: missing parameter {missing[0]!r} (give {missing[0]}=VALUE)"
            )
        known = {**{k: v for k, v in self.params.items() if v is not None}, **values}
        return VAR.sub(lambda m: known.get(m.group(1), m.group(0)), self.body).strip()

    def summary(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "when": self.when,
            "params": self.params,
            "path": str(self.path),
            "preview": "\n".join(self.body.strip().splitlines()[:6]),
        }


def parse_skill(path: Path, text: str) -> Skill:
    if not text.startswith("---\n"):
        raise ConfigError(f"{path}: a skill starts with front matter between '---' lines")
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise ConfigError(f"{path}: front matter is not closed with a '---' line")
    meta: dict[str, str] = {}
    for n, line in enumerate(head.splitlines(), start=2):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon:
            raise ConfigError(f"{path}: line {n}: expected 'key: value'")
        meta[key.strip()] = value.strip()
    unknown = set(meta) - {"name", "description", "when", "params"}
    if unknown:
        raise ConfigError(f"{path}: unknown front matter field(s): {', '.join(sorted(unknown))}")
    name = meta.get("name", path.stem)
    if not NAME.match(name):
        raise ConfigError(f"{path}: name {name!r}: lower-case letters, digits and '-'")
    if not meta.get("description"):
        raise ConfigError(f"{path}: description: a one-line description is required")
    params: dict[str, str | None] = {}
    for item in filter(None, (p.strip() for p in meta.get("params", "").split(","))):
        key, eq, default = item.partition("=")
        if not re.match(r"^[a-z_][a-z0-9_]*$", key.strip()):
            raise ConfigError(
                f"{path}: params: {key.strip()!r} is not a parameter name "
                "(write name=default, or name for a required one)"
            )
        params[key.strip()] = default.strip() if eq else None
    return Skill(name, meta["description"], body, path, meta.get("when", ""), params)


def skill_dirs() -> list[Path]:
    """The project's skills/, then the user's (which win): $XDG_CONFIG_HOME/swarm/skills."""
    import os

    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [SKILLS_DIR, Path(xdg) / "swarm" / "skills"]


def parse_args(words: list[str]) -> dict[str, str]:
    """`key=value` words as parameters; a word without '=' is an error."""
    out = {}
    for w in words:
        key, eq, value = w.partition("=")
        if not eq or not key:
            raise ConfigError(f"skill parameter {w!r}: write name=value")
        out[key] = value
    return out


def load_skills(dirs: list[Path] | None = None) -> tuple[dict[str, Skill], list[str]]:
    """Skills by name from the directories (later ones win), and one line per broken file.
    Files are read on every call, so an edited skill is live at once."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for d in dirs or skill_dirs():
        for path in sorted(d.glob("*.md")) if d.is_dir() else []:
            try:
                skill = parse_skill(path, path.read_text(encoding="utf-8"))
            except (ConfigError, OSError, UnicodeDecodeError) as exc:
                problems.append(str(exc))
                continue
            skills[skill.name] = skill
    return skills, problems


def find_skill(name: str) -> Skill:
    skills, _ = load_skills()
    if name not in skills:
        raise ConfigError(f"unknown skill {name!r} (`swarm skills` lists them)")
    return skills[name]


def skill_text(name: str, values: dict[str, str], fallback: str = "") -> str:
    """Render a shipped skill by name, or the fallback text if it is missing or broken."""
    skills, _ = load_skills()
    skill = skills.get(name)
    if skill is None:
        return VAR.sub(lambda m: values.get(m.group(1), m.group(0)), fallback)
    return skill.render(values)
