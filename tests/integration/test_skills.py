"""The skills library from any pane: list, show, inject; bad skills are named and skipped."""

from __future__ import annotations

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


@pytest.fixture
def user_skills(tmp_path, monkeypatch):
    d = tmp_path / "xdg" / "swarm" / "skills"
    d.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (d / "ship-it.md").write_text(
        "---\nname: ship-it\ndescription: Ship {what}\n"
        "params: what\n---\nShip {what} today, {agent}.\n"
    )
    (d / "broken.md").write_text("no front matter at all\n")
    return d


async def test_list_show_and_inject_skills(sandbox, start_fleet, user_skills):
    run = await start_fleet(sandbox.layout("sk", mock_agent("Ada", focus="the lexer")))
    await run.wait_states("idle")
    listing = await sandbox.aswarm("skills")
    assert listing.returncode == 0, listing.stderr
    names = [line.split()[0] for line in listing.stdout.splitlines()]
    for expected in (
        "judge",
        "thermonuclear-review",
        "read-the-code-first",
        "extended-time",
        "handoff",
        "planner",
        "worker",
        "verify-before-done",
        "reprompt",
        "ship-it",
    ):
        assert expected in names
    assert "broken.md" in listing.stderr and "front matter" in listing.stderr

    shown = await sandbox.aswarm("skills", "show", "thermonuclear-review")
    assert shown.returncode == 0
    assert "params: rounds=3, scope=the change" in shown.stdout

    sent = await sandbox.aswarm(
        "send", "Ada", "--skill", "thermonuclear-review", "--param", "rounds=2", "--wait", "15"
    )
    assert sent.returncode == 0, sent.stderr
    await async_wait_until(lambda: sandbox.received("Ada"), 15, "the skill", run.screens)
    (text,) = sandbox.received("Ada")
    assert text.startswith("Review the change from scratch") and "Do 2 rounds." in text


async def test_bad_skill_requests_are_one_line(sandbox, start_fleet, user_skills):
    run = await start_fleet(sandbox.layout("sk2", mock_agent("Bo")))
    await run.wait_states("idle")
    unknown = await sandbox.aswarm("send", "Bo", "--skill", "nope")
    assert unknown.returncode == 1
    (line,) = unknown.stderr.strip().splitlines()
    assert line.startswith("swarm: unknown skill 'nope' (skills: ") and "ship-it" in line
    missing = await sandbox.aswarm("send", "Bo", "--skill", "ship-it")
    assert missing.stderr.strip().splitlines() == [
        "swarm: skill ship-it: missing parameter 'what' (give what=VALUE)"
    ]
    ok = await sandbox.aswarm(
        "send", "Bo", "--skill", "ship-it", "--param", "what=v2", "--wait", "15"
    )
    assert ok.returncode == 0, ok.stderr
    assert sandbox.received("Bo") == ["Ship v2 today, Bo."]


async def test_remind_from_the_cli_including_a_scheduled_fresh_start(sandbox, start_fleet):
    run = await start_fleet(sandbox.layout("rm1", mock_agent("Cal")))
    await run.wait_states("idle")
    added = await sandbox.aswarm("remind", "add", "--to", "Cal", "--every", "4h", "--fresh")
    assert added.returncode == 0, added.stderr
    bad = await sandbox.aswarm("remind", "add", "--to", "Cal", "--every", "soon", "--text", "x")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "not a duration" in bad.stderr
    listing = await sandbox.aswarm("remind", "list")
    assert "#1 to Cal every 4h next" in listing.stdout and "fresh start" in listing.stdout
    (row,) = run.fleet.store.reminders()
    assert row.action == "fresh"
