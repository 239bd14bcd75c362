"""swarm save: up -> save -> down -> up gives the same fleet."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from swarm_tui.config.layout import load_layout, resolve_layout
from swarm_tui.fleet.store import NewTask
from swarm_tui.testing import mock_agent

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def picture(fleet):
    """What must survive a round trip, in tile order."""
    agents = [
        (a.name, a.spec.cli, a.spec.model, a.role, a.focus, a.spec.args)
        for a in fleet.agents.values()
    ]
    tasks = [
        (t.agent, t.spec, t.verify, t.status) for t in fleet.store.tasks() if t.status != "complete"
    ]
    reminders = [
        (r.target, r.kind, r.period, r.at, r.text, r.skill) for r in fleet.store.reminders()
    ]
    return agents, tasks, reminders


async def test_save_then_up_brings_back_the_same_fleet(sandbox, start_fleet, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    layout = sandbox.layout(
        "orig",
        mock_agent("Ada", focus="parser", role="planner", model="mock-9"),
        mock_agent("Bo", focus="lexer"),
        groups=[
            {
                "hosts": ["local"],
                "per_host": 3,
                "names": "nba",
                "role": "worker",
                "cli": "mock",
                "focus": "shards",
                "args": ["--work", "0.3"],
            }
        ],
        reminders=[{"to": "role:worker", "idle": "10m", "skill": "stall"}],
    )
    run = await start_fleet(layout)
    await run.wait_states("idle")
    fleet = run.fleet
    fleet.set_focus("Bird", "shard 2 only")  # a group agent's focus changed by hand
    fleet.tasks.add(
        "Bo", NewTask(spec="Port the lexer", verify="true", review_on_idle=False), origin="cli"
    )
    added = await sandbox.aswarm(
        "remind", "add", "--to", "Ada", "--every", "45m", "--text", "check on {focus}"
    )
    assert added.returncode == 0, added.stderr
    before = picture(fleet)

    saved = await sandbox.aswarm("save", "kept")
    assert saved.returncode == 0, saved.stderr
    path = tmp_path / "xdg" / "swarm" / "layouts" / "kept.toml"
    assert str(path) in saved.stdout
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["name"] == "kept" and len(data["groups"]) == 1  # groups stay short
    assert data["focus"] == {"Bird": "shard 2 only", "Bo": "Port the lexer"}  # follows task
    again = await sandbox.aswarm("save", "kept")
    assert again.returncode != 0 and "exists" in again.stderr  # no silent overwrite

    down = await sandbox.aswarm("down", str(layout))
    assert down.returncode == 0
    await run.stop()
    run2 = await start_fleet(load_layout(path).path)
    await run2.wait_states("idle")
    after = picture(run2.fleet)
    assert after[0] == before[0]
    assert [t[:3] for t in after[1]] == [t[:3] for t in before[1]]
    assert sorted(after[2]) == sorted(before[2])


def _one_line(result) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    return line


async def test_saving_the_shipped_demo_writes_the_users_copy(
    sandbox, start_fleet, tmp_path, monkeypatch
):
    """`swarm save demo` (and `S`, which calls the same code) once overwrote the shipped
    layouts/demo.toml: comments lost, cwd made absolute. The checkout is never written."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    shipped = ROOT / "layouts" / "demo.toml"
    original = shipped.read_bytes()
    try:
        run = await start_fleet(shipped, visible=False)
        saved = await sandbox.aswarm("save", "demo")
        assert saved.returncode == 0, saved.stderr
        assert shipped.read_bytes() == original
        mine = xdg / "swarm" / "layouts" / "demo.toml"
        assert saved.stdout.strip() == f"saved {mine} (bring it back with: swarm up demo)"
        assert stat.S_IMODE(mine.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(mine.stat().st_mode) == 0o600
        assert load_layout(mine).fleet == "demo"
        assert [a.name for a in load_layout(mine).agents()] == list(run.fleet.agents)
        # the user's copy is what `swarm up demo` finds, and `swarm layouts` lists it
        monkeypatch.chdir(tmp_path)
        assert resolve_layout("demo") == mine
        listing = await sandbox.aswarm("layouts", env={"XDG_CONFIG_HOME": str(xdg)})
        assert listing.returncode == 0, listing.stderr
        (row,) = [ln for ln in listing.stdout.splitlines() if ln.startswith("demo ")]
        assert row.endswith(f"({mine})"), listing.stdout
        # saving again: refused in one line naming the file and --force; --force overwrites
        line = _one_line(await sandbox.aswarm("save", "demo"))
        assert str(mine) in line and "--force" in line, line
        mine.write_text(mine.read_text() + "# my note\n")
        forced = await sandbox.aswarm("save", "demo", "--force")
        assert forced.returncode == 0, forced.stderr
        assert "# my note" not in mine.read_text()
        assert stat.S_IMODE(mine.stat().st_mode) == 0o600
        assert shipped.read_bytes() == original
    finally:
        if shipped.read_bytes() != original:  # never leave the checkout damaged
            shipped.write_bytes(original)


async def test_the_fleets_own_file_is_never_overwritten_without_force(
    sandbox, start_fleet, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "layouts").mkdir()
    own = project / "layouts" / "proj.toml"
    own.write_text(
        '# my comments\nname = "proj"\n[defaults]\ncwd = "../src"\n'
        f"{sandbox_agent(sandbox, 'Ada')}",
        encoding="utf-8",
    )
    before = own.read_bytes()
    run = await start_fleet(own, visible=False)
    assert run.fleet.agents["Ada"].spec.cwd == str(project / "src")
    line = _one_line(await sandbox.aswarm("save", "proj"))
    assert line == (
        f"swarm: {own} exists: choose another name, or overwrite it with `swarm save proj --force`"
    )
    assert own.read_bytes() == before
    # another name goes next to it, and keeps the relative cwd the user wrote
    saved = await sandbox.aswarm("save", "proj2")
    assert saved.returncode == 0, saved.stderr
    data = tomllib.loads((project / "layouts" / "proj2.toml").read_text())
    assert data["defaults"]["cwd"] == "../src"
    assert load_layout(project / "layouts" / "proj2.toml").agents()[0].cwd == str(project / "src")


def sandbox_agent(sandbox, name: str) -> str:
    """One fast mock agent as a TOML `[[agents]]` table."""
    path = sandbox.layout("tmp-agent", mock_agent(name))
    text = path.read_text()
    path.unlink()
    return text[text.index("[[agents]]") :]


async def test_save_then_up_of_the_same_fleet_does_not_add_its_tasks_again(
    sandbox, start_fleet, tmp_path, monkeypatch
):
    """`swarm save` then `swarm up` of the saved layout showed each open task twice (#5
    incomplete and #6 pending, same spec): the journal already holds them."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    layout = sandbox.layout(
        "dup",
        mock_agent("Ada", tasks=[{"spec": "Port the parser", "review_on_idle": False}]),
        mock_agent("Bo"),
    )
    run = await start_fleet(layout)
    await run.wait_states("idle")
    run.fleet.tasks.add("Bo", NewTask(spec="Port the lexer", review_on_idle=False), origin="cli")
    before = [(t.id, t.agent, t.spec) for t in run.fleet.store.tasks()]
    assert len(before) == 2
    saved = await sandbox.aswarm("save", "dup")
    assert saved.returncode == 0, saved.stderr
    path = tmp_path / "xdg" / "swarm" / "layouts" / "dup.toml"
    assert [
        t["journal_id"] for ts in tomllib.loads(path.read_text())["tasks"].values() for t in ts
    ] == [i for i, *_ in before]
    await run.stop()
    run2 = await start_fleet(path)
    assert [(t.id, t.agent, t.spec) for t in run2.fleet.store.tasks()] == before
