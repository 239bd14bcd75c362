"""Exit codes and one-line refusals of `swarm send` and `swarm remind` against a real fleet:
a wait that ends before delivery is not success, and what would be silently ignored (a
parameter the skill does not take, a skill that does not exist, a duration without a unit)
is refused before anything is queued."""

from __future__ import annotations

import subprocess

import pytest

from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, f"expected failure, got 0: {result.stdout!r}"
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"want one line on stderr, got: {result.stderr!r}"
    return lines[0]


@pytest.fixture
async def fleet(sandbox, start_fleet):
    run = await start_fleet(
        sandbox.layout("codes", mock_agent("Ada"), mock_agent("Slow", "--work", "3"))
    )
    await run.wait_states("idle")
    return run


async def test_send_wait_that_times_out_exits_3_and_says_it_stays_queued(sandbox, fleet):
    first = await sandbox.aswarm("send", "Slow", "first", "--wait", "10")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "#1 to Slow: delivered"
    # Slow works on "first" for seconds: the next one cannot be typed within 0.5 s
    late = await sandbox.aswarm("send", "Slow", "second", "--wait", "0.5")
    assert late.returncode == 3, (late.stdout, late.stderr)
    assert late.stdout.strip() == (
        "#2 to Slow: still queued after 0.5 s: it stays in Slow's "
        "queue and will be delivered when Slow is ready"
    )
    assert one_line_error(late) == (
        "swarm: not delivered within 0.5 s: #2 still queued; it will be delivered, do not "
        "send it again (`swarm messages` shows when)"
    )
    # and it is delivered, once
    await async_wait_until(
        lambda: sandbox.received("Slow") == ["first", "second"],
        20,
        "the queued message to arrive",
        fleet.screens,
    )
    await async_wait_until(
        lambda: [m["status"] for m in sandbox.journal("codes")] == ["delivered", "delivered"],
        10,
        "the delivery verdict",
        fleet.screens,
    )


async def test_unknown_skill_parameter_is_refused_naming_the_parameters(sandbox, fleet):
    line = one_line_error(
        await sandbox.aswarm("send", "Ada", "--skill", "thermonuclear-review", "--param", "bogus=1")
    )
    assert line == (
        "swarm: skill 'thermonuclear-review' has no parameter 'bogus' (its "
        "parameters: rounds=3, scope=the change)"
    )
    line = one_line_error(
        await sandbox.aswarm("send", "Ada", "--skill", "stall", "--param", "rounds=2")
    )
    assert line == "swarm: skill 'stall' has no parameter 'rounds' (it takes none)"
    line = one_line_error(await sandbox.aswarm("send", "Ada", "hi", "--param", "rounds=2"))
    assert "--skill" in line, line
    assert sandbox.journal("codes") == []
    # declared parameters and the ones swarm fills in are fine
    ok = await sandbox.aswarm(
        "send",
        "Ada",
        "--skill",
        "thermonuclear-review",
        "--param",
        "rounds=2",
        "--param",
        "focus=the parser",
        "--wait",
        "10",
    )
    assert ok.returncode == 0, ok.stderr


async def test_unknown_skill_is_refused_naming_the_skills_there_are(sandbox, fleet):
    for argv in (
        ("send", "Ada", "--skill", "nosuch"),
        ("remind", "add", "--to", "Ada", "--every", "30m", "--skill", "nosuch"),
    ):
        line = one_line_error(await sandbox.aswarm(*argv))
        assert line.startswith("swarm: unknown skill 'nosuch' (skills: "), line
        assert "stall" in line and "thermonuclear-review" in line, line
    assert sandbox.journal("codes") == []
    assert fleet.fleet.store.reminders() == []


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--idle", "0s", 'swarm: --idle: \'0s\' is too short: at least 10s (e.g. "30s", "10m")'),
        (
            "--every",
            "20",
            'swarm: --every: \'20\' has no unit: write "20m" for minutes or "20s" '
            "for seconds (units: s, m, h)",
        ),
    ],
)
async def test_remind_durations_need_a_unit_and_ten_seconds(sandbox, fleet, flag, value, says):
    line = one_line_error(
        await sandbox.aswarm("remind", "add", "--to", "Ada", flag, value, "--text", "wake up")
    )
    assert line == says
    assert fleet.fleet.store.reminders() == []


async def test_a_flag_after_a_name_is_refused_not_broadcast(sandbox, fleet):
    """`swarm send Ada --all` once broadcast the text "Ada" to every agent."""
    line = one_line_error(await sandbox.aswarm("send", "Ada", "--all"))
    assert "--all after a name or message is ambiguous" in line and "-- --all" in line
    line = one_line_error(await sandbox.aswarm("send", "Ada", "--role", "worker"))
    assert "--role after a name" in line
    sent = await sandbox.aswarm("send", "Ada", "--", "--all")
    assert sent.returncode == 0, sent.stderr
    await async_wait_until(
        lambda: sandbox.received("Ada") == ["--all"],
        20,
        "the text '--all' to reach Ada alone",
        fleet.screens,
    )
    assert [(m["recipient"], m["text"]) for m in sandbox.journal("codes")] == [("Ada", "--all")]


async def test_a_message_within_the_limit_is_not_refused_for_its_json_escaping(sandbox, fleet):
    """2 MB of `é` is 4 MB as \\u escapes: it must still go (measured on encoded bytes)."""
    text = "é" * 1_000_000 + " end"  # 2 MB of UTF-8
    sent = await sandbox.aswarm("send", "Ada", "-", input=text, timeout=60)
    assert sent.returncode == 0, sent.stderr
    too_big = await sandbox.aswarm("send", "Ada", "-", input="é" * 2_000_000)
    line = one_line_error(too_big)
    assert "4000001 bytes" in line or "bytes; the limit is" in line, line
    rows = sandbox.journal("codes")
    assert [len(r["text"]) for r in rows] == [len(text)]
