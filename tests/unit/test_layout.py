"""Layout files: strict validation, defaults, one clear line per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from swarm_tui.config.layout import LoadedLayout, json_schema, load_layout, parse_layout
from swarm_tui.errors import ConfigError, SwarmError

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "fleet.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_layout(path)
    return str(info.value).splitlines()


VALID = """
name = "night-shift"
description = "two workers and a shell"

[defaults]
cli = "mock"
model = "mock-2"
role = "worker"
cwd = "work"
env = { SHARED = "1", OVERRIDE = "default" }

[[agents]]
name = "Gauss"
role = "planner"
focus = "split the refactor"
prompt = "Plan it."

[[agents]]
name = "Poincaré"
model = "mock-3"
args = ["--work", "2"]
env = { OVERRIDE = "mine" }
cwd = "/srv/other"

[[agents]]
name = "Shell"
cli = "generic"
command = "bash -l"
"""


def test_valid_layout_loads(tmp_path: Path) -> None:
    loaded = load_layout(write(tmp_path, VALID))
    assert isinstance(loaded, LoadedLayout)
    assert loaded.fleet == "night-shift"
    assert loaded.layout.description == "two workers and a shell"
    assert [a.name for a in loaded.agents()] == ["Gauss", "Poincaré", "Shell"]


def test_defaults_apply_and_agents_override_them(tmp_path: Path) -> None:
    gauss, poincare, shell = load_layout(write(tmp_path, VALID)).agents()
    assert (gauss.cli, gauss.model, gauss.role) == ("mock", "mock-2", "planner")
    assert gauss.cwd == str((tmp_path / "work").resolve())  # relative to the layout file
    assert gauss.env == {"SHARED": "1", "OVERRIDE": "default"}
    assert gauss.focus == "split the refactor" and gauss.prompt == "Plan it."
    assert (poincare.model, poincare.role) == ("mock-3", "worker")
    assert poincare.args == ("--work", "2")
    assert poincare.env == {"SHARED": "1", "OVERRIDE": "mine"}
    assert poincare.cwd == "/srv/other"
    assert (shell.cli, shell.command) == ("generic", "bash -l")
    assert [a.index for a in (gauss, poincare, shell)] == [0, 1, 2]


def test_minimal_layout_takes_built_in_defaults(tmp_path: Path) -> None:
    loaded = load_layout(write(tmp_path, '[[agents]]\nname = "Euler"\n', "solo.toml"))
    assert loaded.fleet == "solo"  # the file's stem when the layout has no name
    (euler,) = loaded.agents()
    assert (euler.cli, euler.model, euler.role, euler.command) == ("mock", "", "worker", "")
    assert euler.cwd == str(tmp_path.resolve())
    assert euler.env == {} and euler.args == ()


def test_duplicate_names_are_case_insensitive(tmp_path: Path) -> None:
    path = write(tmp_path, '[[agents]]\nname = "Gauss"\n[[agents]]\nname = "gauss"\n')
    assert problems(path) == [f"{path}:4: agent 'gauss': name: duplicate agent name 'gauss'"]


def test_unknown_field_names_file_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, '[[agents]]\nname = "Gauss"\ncolour = "red"\n')
    (line,) = problems(path)
    assert line.startswith(f"{path}:3: agent 'Gauss': colour: unknown field")


def test_unknown_top_level_and_defaults_fields(tmp_path: Path) -> None:
    path = write(tmp_path, 'nam = "x"\n[defaults]\nmodle = "m"\n[[agents]]\nname = "A"\n')
    lines = problems(path)
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}:1: nam: unknown field")
    assert lines[1].startswith(f"{path}:3: defaults.modle: unknown field")


def test_wrong_types(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[agents]]\nname = "A"\nargs = "--fast"\n[[agents]]\nname = "B"\nenv = { X = 1 }\n',
    )
    lines = problems(path)
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}:3: agent 'A': args: ") and "list" in lines[0]
    assert lines[1].startswith(f"{path}:6: agent 'B': env.X: ") and "string" in lines[1]


def test_unknown_cli_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, '[[agents]]\nname = "A"\ncli = "claude-9000"\n')
    (line,) = problems(path)
    assert line.startswith(f"{path}:3: agent 'A': cli: ") and "'mock'" in line


def test_generic_without_command(tmp_path: Path) -> None:
    path = write(tmp_path, '[[agents]]\nname = "Shell"\ncli = "generic"\n')
    assert problems(path) == [
        f"{path}:1: agent 'Shell': command: cli 'generic' needs a command to run"
    ]


def test_generic_from_defaults_needs_a_command_too(tmp_path: Path) -> None:
    text = '[defaults]\ncli = "generic"\n[[agents]]\nname = "A"\ncommand = "top"\n'
    text += '[[agents]]\nname = "B"\n'
    path = write(tmp_path, text)
    assert problems(path) == [f"{path}:6: agent 'B': command: cli 'generic' needs a command to run"]


def test_bad_names_and_roles(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "9lives"\n[[agents]]\nname = "1st"\nrole = "Boss"\n')
    lines = problems(path)
    assert lines[0].startswith(f"{path}:1: name: must start with a letter")
    assert lines[1].startswith(f"{path}:3: agent '1st': name: must start with a letter")
    assert lines[2].startswith(f"{path}:4: agent '1st': role: must be lower-case")


def test_no_agents(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "empty"\nagents = []\n')
    (line,) = problems(path)
    assert line.startswith(f"{path}:2: agents: ")
    path = write(tmp_path, 'name = "empty"\n', "none.toml")
    assert problems(path) == [f"{path}: agents: a layout needs at least one agent (or a group)"]


def test_bad_toml_gives_file_and_message(tmp_path: Path) -> None:
    path = write(tmp_path, '[[agents]\nname = "A"\n')
    (line,) = problems(path)
    assert line.startswith(f"{path}: not valid TOML: ")
    assert "line 1" in line


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert problems(missing) == [f"{missing}: no such layout file"]
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe name")
    (line,) = problems(binary)
    assert line.startswith(f"{binary}: cannot read: ")


def test_config_error_exit_code_and_tree() -> None:
    assert ConfigError.exit_code == 2
    assert issubclass(ConfigError, SwarmError)
    assert ConfigError("x").exit_code == 2


def test_every_problem_on_its_own_line(tmp_path: Path) -> None:
    text = (
        'bogus = 1\n[defaults]\ncli = "claude-code"\n'
        '[[agents]]\nname = "1bad"\nrole = "Boss"\nfoo = 1\n'
        '[[agents]]\nname = "Fine"\nargs = "x"\n'
    )
    path = write(tmp_path, text)
    lines = problems(path)
    # one per line, in the file's order, each with its line number and the agent's name
    assert [ln.removeprefix(f"{path}:").split(": ")[:2] for ln in lines] == [
        ["1", "bogus"],
        ["3", "defaults.cli"],
        ["5", "agent '1bad'"],
        ["6", "agent '1bad'"],
        ["7", "agent '1bad'"],
        ["10", "agent 'Fine'"],
    ]
    assert [ln.split(": ")[2] for ln in lines[2:]] == ["name", "role", "foo", "args"]


def test_every_cross_agent_problem_is_reported(tmp_path: Path) -> None:
    text = (
        '[[agents]]\nname = "Shell"\ncli = "generic"\n'
        '[[agents]]\nname = "Gauss"\n[[agents]]\nname = "GAUSS"\n'
    )
    path = write(tmp_path, text)
    assert problems(path) == [
        f"{path}:1: agent 'Shell': command: cli 'generic' needs a command to run",
        f"{path}:7: agent 'GAUSS': name: duplicate agent name 'GAUSS'",
    ]


def test_parse_layout_is_pure(tmp_path: Path) -> None:
    # parse_layout never touches the path: it names the file in messages only
    ghost = tmp_path / "not-there.toml"
    loaded = parse_layout(ghost, '[[agents]]\nname = "A"\n')
    assert loaded.path == ghost and loaded.fleet == "not-there"


def test_layout_is_frozen(tmp_path: Path) -> None:
    loaded = load_layout(write(tmp_path, VALID))
    with pytest.raises(ValidationError, match="frozen"):
        loaded.layout.agents[0].name = "Other"


def test_json_schema_is_valid_json_with_agents() -> None:
    schema = json.loads(json_schema())
    assert schema["type"] == "object"
    assert "agents" in schema["properties"]
    assert schema["additionalProperties"] is False
    # the agent model is in there, with its documented fields
    agent = schema["$defs"]["AgentSpec"]
    assert {"name", "cli", "focus", "prompt", "command"} <= set(agent["properties"])
    assert agent["properties"]["name"]["description"]


def test_demo_layout_validates_with_at_least_twelve_agents() -> None:
    loaded = load_layout(ROOT / "layouts" / "demo.toml")
    agents = loaded.agents()
    assert loaded.fleet == "demo"
    assert len(agents) >= 12
    assert len({a.name.casefold() for a in agents}) == len(agents)
    assert all(a.cli == "mock" for a in agents)


ISSUE_12 = '''\
name = "x"
description = """
[[agents]]
name = "NotAnAgent"
"""

[[agents]]
name = "Gauss"

[[agents]]
name = "Hilbert"
cli = "claude-9000"

[[agents]]
name = "gauss"
colour = "red"
'''


def test_a_field_error_does_not_hide_the_cross_agent_problems(tmp_path: Path) -> None:
    # an unknown `cli` used to stop validation before the duplicate name was noticed; and a
    # multi-line string holding TOML-looking lines must not shift the line numbers
    path = write(tmp_path, ISSUE_12, "x.toml")
    assert [ln.split(": ")[:3] for ln in problems(path)] == [
        [f"{path}:12", "agent 'Hilbert'", "cli"],
        [f"{path}:15", "agent 'gauss'", "name"],
        [f"{path}:16", "agent 'gauss'", "colour"],
    ]


def test_problems_in_tables_of_tasks_reminders_and_hosts_have_lines(tmp_path: Path) -> None:
    text = (
        '[hosts.gpu1]\nssh = "u@gpu1"\nbogus = 1\n'  # 1-3
        '[[agents]]\nname = "Ada"\nhost = "gpu2"\n'  # 4-6
        '[[agents.tasks]]\nspec = "x"\nmax_rounds = 0\n'  # 7-9
        '[[agents]]\nname = "Bo"\n'  # 10-11
        '[[agents.tasks]]\nverify = "true"\n'  # 12-13
        '[[reminders]]\nto = "Ada"\nevery = "30"\ntext = "hi"\n'  # 14-17
    )
    path = write(tmp_path, text)
    assert [ln.split(": ")[:3] for ln in problems(path)] == [
        [f"{path}:3", "hosts.gpu1.bogus", "unknown field (check the spelling; `swarm schema`)"],
        [f"{path}:6", "agent 'Ada'", "host"],
        [f"{path}:9", "agent 'Ada'", "tasks[0].max_rounds"],
        [f"{path}:12", "agent 'Bo'", "tasks[0]"],
        [f"{path}:16", "reminders[0].every", "'30' has no unit"],
    ]


def test_a_layout_validated_directly_still_reports_every_cross_problem() -> None:
    from swarm_tui.config.layout import Layout

    with pytest.raises(ValidationError) as info:
        Layout.model_validate({"agents": [{"name": "A", "host": "nowhere"}, {"name": "a"}]})
    text = str(info.value)
    assert "agents[0].host: unknown host 'nowhere'" in text
    assert "agents[1].name: duplicate agent name 'a'" in text


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("idle", "0s", ["'0s' is too short", "at least 10s", '"30s"']),
        ("every", "5s", ["'5s' is too short", "at least 10s"]),
        ("idle", "20", ["'20' has no unit", 'write "20m" for minutes or "20s" for seconds']),
        ("every", "1.5", ["'1.5' has no unit", '"1.5m"']),
        ("idle", "soon", ["'soon' is not a duration", "30m"]),
        ("every", "10 minutes", ["not a duration"]),
    ],
)
def test_durations_need_a_unit_and_a_sane_minimum(
    tmp_path: Path, field: str, value: str, says: list[str]
) -> None:
    path = write(
        tmp_path, f'[[agents]]\nname = "A"\n[[reminders]]\n{field} = "{value}"\ntext = "wake up"\n'
    )
    (line,) = problems(path)
    assert line.startswith(f"{path}:4: reminders[0].{field}: "), line
    for part in says:
        assert part in line, (part, line)


@pytest.mark.parametrize(
    ("value", "secs"), [("10s", 10), ("45s", 45), ("20m", 1200), ("1.5h", 5400), ("2 h", 7200)]
)
def test_durations_with_units_are_read(value: str, secs: float) -> None:
    from swarm_tui.config.work import MIN_PERIOD, ReminderSpec, seconds

    assert seconds(value, MIN_PERIOD) == secs
    assert ReminderSpec(idle=value, text="x").idle == value


def test_talks_to_names_agents_or_roles(tmp_path: Path) -> None:
    text = (
        '[defaults]\ntalks_to = ["lead"]\n'
        '[[agents]]\nname = "Boss"\nrole = "lead"\ntalks_to = []\n'
        '[[agents]]\nname = "Ann"\ntalks_to = ["Boss", "Nobody"]\n'
        '[[agents]]\nname = "Bob"\n'
    )
    path = write(tmp_path, text)
    (line,) = problems(path)
    assert "agent 'Ann': talks_to: 'Nobody' is neither an agent nor a role" in line, line
    good = write(tmp_path, text.replace(', "Nobody"', ""), "good.toml")
    agents = {a.name: a for a in load_layout(good).agents()}
    assert agents["Boss"].talks_to == ()
    assert agents["Ann"].talks_to == ("boss",)
    assert agents["Bob"].talks_to == ("lead",)  # from [defaults]


def test_an_unknown_layout_name_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swarm_tui.config.layout import resolve_layout

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        resolve_layout("nosuchlayout")
    message = str(info.value)
    assert message.startswith("no layout named 'nosuchlayout' (looked in .,")
    assert "`swarm layouts` lists them" in message
    (tmp_path / "mine.toml").write_text('[[agents]]\nname = "A"\n')
    assert resolve_layout("mine") == Path("mine.toml")
