"""swarm save: up -> save -> down -> up gives the same fleet."""

from __future__ import annotations

import tomllib

import pytest

from swarm_tui.config.layout import load_layout
from swarm_tui.testing import mock_agent

pytestmark = pytest.mark.integration


def picture(fleet):
    """What must survive a round trip, in tile order."""
    agents = [(a.name, a.spec.cli, a.spec.model, a.role, a.focus, a.spec.args)
              for a in fleet.agents.values()]
    tasks = [(t["agent"], t["spec"], t["verify"], t["status"])
             for t in fleet.store.tasks() if t["status"] != "complete"]
    reminders = [(r["target"], r["kind"], r["period"], r["at"], r["text"], r["skill"])
                 for r in fleet.store.reminders()]
    return agents, tasks, reminders


async def test_save_then_up_brings_back_the_same_fleet(sandbox, start_fleet, tmp_path,
                                                      monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    layout = sandbox.layout(
        "orig",
        mock_agent("Ada", focus="parser", role="planner", model="mock-9"),
        mock_agent("Bo", focus="lexer"),
        groups=[{"hosts": ["local"], "per_host": 3, "names": "nba", "role": "worker",
                 "cli": "mock", "focus": "shards", "args": ["--work", "0.3"]}],
        reminders=[{"to": "role:worker", "idle": "10m", "skill": "stall"}])
    run = await start_fleet(layout)
    await run.wait_states("idle")
    fleet = run.fleet
    fleet.set_focus("Bird", "shard 2 only")  # a group agent's focus changed by hand
    fleet.tasks.add("Bo", {"spec": "Port the lexer", "verify": "true",
                           "review_on_idle": 0}, origin="cli")
    added = await sandbox.aswarm("remind", "add", "--to", "Ada", "--every", "45m",
                                 "--text", "check on {focus}")
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
