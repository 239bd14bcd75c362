"""Skill files (parsing, rendering, bad files) and group expansion for big fleets."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm_tui.config.layout import parse_layout
from swarm_tui.config.skills import load_skills, parse_skill
from swarm_tui.errors import ConfigError


def skill(tmp: Path, name: str, text: str) -> Path:
    path = tmp / f"{name}.md"
    path.write_text(text)
    return path


def test_skill_front_matter_params_and_render(tmp_path: Path) -> None:
    p = skill(
        tmp_path,
        "ship",
        "---\nname: ship\ndescription: Ship it\nwhen: at the end\n"
        "params: what, tone=calm\n---\nShip {what}, {agent}, {tone}ly. {unknown}\n",
    )
    s = parse_skill(p, p.read_text())
    assert (s.name, s.description, s.when, s.params) == (
        "ship",
        "Ship it",
        "at the end",
        {"what": None, "tone": "calm"},
    )
    assert s.render({"what": "v2", "agent": "Ada"}) == "Ship v2, Ada, calmly. {unknown}"
    with pytest.raises(ConfigError, match="missing parameter 'what'"):
        s.render({"agent": "Ada"})


@pytest.mark.parametrize(
    "text, problem",
    [
        ("no front matter\n", "starts with front matter"),
        ("---\nname: x\ndescription: d\n", "not closed"),
        ("---\nname: x\n---\nbody\n", "description: a one-line description is required"),
        ("---\nname: Bad Name\ndescription: d\n---\nb\n", "lower-case letters"),
        ("---\nname: x\ndescription: d\ncolour: red\n---\nb\n", "unknown front matter field"),
        ("---\nname: x\ndescription: d\nparams: 9lives=1\n---\nb\n", "not a parameter name"),
        ("---\nname x\n---\nb\n", "expected 'key: value'"),
    ],
)
def test_broken_skill_files_name_the_file_and_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    p = skill(tmp_path, "x", text)
    with pytest.raises(ConfigError, match=problem) as info:
        parse_skill(p, text)
    assert str(info.value).startswith(str(p))


def test_a_broken_skill_is_skipped_the_rest_load(tmp_path: Path) -> None:
    skill(tmp_path, "good", "---\nname: good\ndescription: fine\n---\nok\n")
    skill(tmp_path, "bad", "nope\n")
    skills, problems = load_skills([tmp_path])
    assert list(skills) == ["good"]
    assert len(problems) == 1 and "bad.md" in problems[0]


def test_shipped_skills_all_load() -> None:
    skills, problems = load_skills()
    assert problems == []
    assert {
        "judge",
        "reprompt",
        "thermonuclear-review",
        "read-the-code-first",
        "extended-time",
        "handoff",
        "planner",
        "worker",
        "verify-before-done",
        "stall",
    } <= set(skills)


CLUSTER = """
name = "c"
[hosts."node[01-16]"]
ssh = "gpu-node-{}"
gpus = 8
[[agents]]
name = "Planner"
[[groups]]
hosts = ["node[01-16]"]
per_host = 8
gpus_per_agent = 1
"""


def test_groups_expand_deterministically_and_pin_gpus() -> None:
    agents = parse_layout(Path("c.toml"), CLUSTER).agents()
    again = parse_layout(Path("c.toml"), CLUSTER).agents()
    assert [a.name for a in agents] == [a.name for a in again]
    assert len(agents) == 129 and len({a.name for a in agents}) == 129
    on7 = [a for a in agents if a.host == "node07"]
    assert [a.env["CUDA_VISIBLE_DEVICES"] for a in on7] == [str(i) for i in range(8)]
    assert agents[1].name == "Gauss" and agents[1].host == "node01"


def test_a_group_larger_than_its_pool_is_refused() -> None:
    text = CLUSTER.replace("per_host = 8", "per_host = 12").replace(
        'hosts = ["node[01-16]"]', 'hosts = ["node[01-16]"]\nnames = ["A1", "B2"]'
    )
    with pytest.raises(ConfigError, match=r"groups\[0\]\.names: names has too few names"):
        parse_layout(Path("c.toml"), text)


def test_unknown_host_and_focus_for_nobody_are_refused() -> None:
    text = (
        CLUSTER.replace('name = "Planner"', 'name = "Planner"\nhost = "node99"')
        + '\n[focus]\nNobody = "x"\n'
    )
    with pytest.raises(ConfigError) as info:
        parse_layout(Path("c.toml"), text)
    lines = str(info.value).splitlines()
    assert any("agent 'Planner': host: unknown host 'node99'" in ln for ln in lines)
