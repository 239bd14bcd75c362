"""Scrollback: an agent's tmux history read on demand down the control channel (`history`),
and `swarm grep` over every agent's history, against real tmux servers running agents that
printed thousands of numbered lines. Bad input is one line, and a pattern that backtracks
without end never stops the engine."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarm_tui.fleet import history as history_module
from swarm_tui.protocol.client import FleetClient, Refused
from swarm_tui.testing import Sandbox, async_wait_until, mock_agent, shell_agent

pytestmark = pytest.mark.integration

# prints `count` numbered lines (line 7 in red, line `needle` with a word found nowhere
# else), then "END", then waits on its terminal like an agent waiting for input
PRINTER = r"""
import sys
count, name, needle = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(1, count + 1):
    if i == 7:
        print(f"\x1b[31mnumbered line {i:05d} of {name} in red\x1b[0m")
    elif i == needle:
        print(f"numbered line {i:05d} of {name}: the haystack needle of {name}")
    else:
        print(f"numbered line {i:05d} of {name}")
print(f"END of {name}", flush=True)
sys.stdin.read()
"""

# hostile output: escape sequences that are not colours, control characters, a line far
# longer than any screen, catastrophic-backtracking bait
HOSTILE = r"""
import sys
w = sys.stdout.write
w("before the storm\n")
w("osc52 \x1b]52;c;aGFja2Vk\x07clipboard\n")
w("title \x1b]0;pwned\x07bell \x07 done\n")
w("c1 \u009b31m csi and \u009d0;x\u009c osc\n")
w("truecolor \x1b[38;2;1;2;3mrgb\x1b[0m end\n")
w("x" * 30000 + "\n")
w("a" * 40 + "!\n")
w("after the storm\n")
sys.stdout.flush()
sys.stdin.read()
"""

NUMBERED = re.compile(r"numbered line (\d{5}) of (\w+)")


def printer(box: Sandbox, name: str, count: int, needle: int = 0) -> dict[str, object]:
    script = box.files / "printer.py"
    script.write_text(PRINTER)
    return shell_agent(name, command=f"{sys.executable} {script} {count} {name} {needle}")


def hostile(box: Sandbox, name: str) -> dict[str, object]:
    script = box.files / "hostile.py"
    script.write_text(HOSTILE)
    return shell_agent(name, command=f"{sys.executable} {script}")


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"want one line on stderr, got: {result.stderr!r}"
    return lines[0]


async def history_of(sock: Path, name: str, until_text: str, lines: int = 10_000) -> list[str]:
    """The agent's history once `until_text` is in it (the agent prints on its own clock)."""
    client = FleetClient(sock)
    last: list[list[str]] = [[]]

    async def read() -> bool:
        last[0] = (await client.history(name, lines)).lines
        return any(until_text in line for line in last[0])

    async def poll() -> None:
        while not await read():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), 20)
    except TimeoutError:
        raise AssertionError(
            f"{until_text!r} never showed in {name}'s history; last: {last[0][-5:]}"
        ) from None
    return last[0]


@pytest.fixture
async def printers(sandbox, start_fleet):
    """Alpha printed 5,000 numbered lines (the haystack at 120), Beta 300 (at 40), and
    a mock agent that prints nothing to its history."""
    run = await start_fleet(
        sandbox.layout(
            "hist",
            printer(sandbox, "Alpha", 5000, 120),
            printer(sandbox, "Beta", 300, 40),
            mock_agent("Mock"),
        )
    )
    sock = sandbox.socket_path("hist")
    await history_of(sock, "Alpha", "END of Alpha")
    await history_of(sock, "Beta", "END of Beta")
    return run


async def test_history_returns_every_line_in_order_including_those_scrolled_off(sandbox, printers):
    sock = sandbox.socket_path("hist")
    lines = await history_of(sock, "Alpha", "END of Alpha")
    numbered = [(int(m.group(1)), m.group(2)) for ln in lines if (m := NUMBERED.search(ln))]
    assert numbered == [(i, "Alpha") for i in range(1, 5001)]
    # the first line is far above the screen: it came from tmux's history, not the screen
    screen = printers.fleet.agents["Alpha"].plain_screen()
    assert not any("numbered line 00001 " in ln for ln in screen)
    assert lines.index(next(ln for ln in lines if "END of Alpha" in ln)) > 5000 - 1
    # colours are kept, as SGR and nothing else
    red = next(ln for ln in lines if "00007" in ln)
    assert "\x1b[31m" in red, repr(red)
    # a smaller request gets the newest lines
    last = await FleetClient(sock).history("Alpha", 100)
    assert len(last.lines) <= 100 and last.truncated
    assert any("END of Alpha" in ln for ln in last.lines)
    assert not any("numbered line 04800 " in ln for ln in last.lines)


async def test_a_mock_agent_s_transcript_scrolls_into_its_history(sandbox, start_fleet):
    """The mock agent as the demo runs it (`--scrollback`: the normal screen, as Claude
    Code draws) with 5,000 lines of transcript: they are all in its history, in order,
    once each, though its screen shows only the last few; and it still reads as idle."""
    run = await start_fleet(
        sandbox.layout("mockhist", mock_agent("Scroller", "--scrollback", "--backlog", "5000"))
    )
    await run.wait_states("idle")
    lines = await history_of(sandbox.socket_path("mockhist"), "Scroller", "backlog line 05000")
    numbered = [
        int(m.group(1)) for ln in lines if (m := re.search(r"backlog line (\d{5}) of Scroller", ln))
    ]
    assert numbered == list(range(1, 5001)), "\n".join(lines[-60:])
    screen = run.fleet.agents["Scroller"].plain_screen()
    assert not any("backlog line 00001 " in ln for ln in screen)
    assert "% context left" in lines[-1]  # the screen comes last
    found = await sandbox.aswarm("grep", "line 00042 ")
    assert found.stdout.splitlines() == ["Scroller:42:   backlog line 00042 of Scroller"]


async def test_grep_finds_a_line_only_in_the_history_with_context_over_two_agents(
    sandbox, printers
):
    result = await sandbox.aswarm("grep", "haystack needle", "-C", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "Alpha-118- numbered line 00118 of Alpha",
        "Alpha-119- numbered line 00119 of Alpha",
        "Alpha:120: numbered line 00120 of Alpha: the haystack needle of Alpha",
        "Alpha-121- numbered line 00121 of Alpha",
        "Alpha-122- numbered line 00122 of Alpha",
        "--",
        "Beta-38- numbered line 00038 of Beta",
        "Beta-39- numbered line 00039 of Beta",
        "Beta:40: numbered line 00040 of Beta: the haystack needle of Beta",
        "Beta-41- numbered line 00041 of Beta",
        "Beta-42- numbered line 00042 of Beta",
    ]
    # line 120 of 5,000 is long gone from Alpha's screen: only the history has it
    assert not any("haystack" in ln for ln in printers.fleet.agents["Alpha"].plain_screen())
    only = await sandbox.aswarm("grep", "haystack", "--agent", "beta")
    assert only.returncode == 0, only.stderr
    assert only.stdout.splitlines() == [
        "Beta:40: numbered line 00040 of Beta: the haystack needle of Beta"
    ]
    # matches whose context touches print as one run, as grep prints them
    near = await sandbox.aswarm("grep", r"line 0012[13] of Alpha", "-C", "1")
    assert near.stdout.splitlines() == [
        "Alpha-120- numbered line 00120 of Alpha: the haystack needle of Alpha",
        "Alpha:121: numbered line 00121 of Alpha",
        "Alpha-122- numbered line 00122 of Alpha",
        "Alpha:123: numbered line 00123 of Alpha",
        "Alpha-124- numbered line 00124 of Alpha",
    ]
    # a regular expression, case folded with -i
    regex = await sandbox.aswarm("grep", "-i", r"LINE 0499[89] of alpha$")
    assert regex.stdout.splitlines() == [
        "Alpha:4998: numbered line 04998 of Alpha",
        "Alpha:4999: numbered line 04999 of Alpha",
    ]


async def test_grep_that_finds_nothing_exits_1_silently(sandbox, printers):
    result = await sandbox.aswarm("grep", "no such text anywhere")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")


async def test_bad_input_is_exit_2_with_one_line(sandbox, printers):
    bad = await sandbox.aswarm("grep", "(unclosed")
    assert bad.returncode == 2
    line = one_line_error(bad)
    assert line.startswith("swarm: grep: bad pattern '(unclosed'"), line
    assert "missing )" in line, line
    nobody = await sandbox.aswarm("grep", "x", "--agent", "Nobody")
    assert nobody.returncode == 2
    assert "no agent named 'Nobody'" in one_line_error(nobody)
    wide = await sandbox.aswarm("grep", "x", "-C", "500")
    assert wide.returncode == 2 and "-C 500" in one_line_error(wide)
    two = await sandbox.aswarm("grep", "x", "y")
    assert two.returncode == 2 and "usage: swarm grep PATTERN" in one_line_error(two)
    # the engine says the same to any client that skips the CLI's own check
    client = FleetClient(sandbox.socket_path("hist"))
    with pytest.raises(Refused, match=r"^grep: bad pattern '\(unclosed'"):
        await client.grep("(unclosed")
    with pytest.raises(Refused, match=r"^no agent named 'Nobody'"):
        await client.history("Nobody")


async def test_without_an_engine_grep_is_exit_2_with_one_line(sandbox):
    result = await sandbox.aswarm("grep", "x")
    assert result.returncode == 2
    assert "no swarm is running" in one_line_error(result)
    bad = await sandbox.aswarm("grep", "[z-a]")  # said before asking any engine
    assert bad.returncode == 2
    assert one_line_error(bad).startswith("swarm: grep: bad pattern '[z-a]': bad character")


async def test_an_agent_on_a_host_that_is_down_is_one_clear_line(sandbox, start_fleet):
    run = await start_fleet(
        sandbox.layout(
            "down",
            printer(sandbox, "Here", 50, 10),
            mock_agent("Away", host="ghost"),
            hosts={"ghost": {"ssh": "127.0.0.1:1"}},
        )
    )
    sock = sandbox.socket_path("down")
    await history_of(sock, "Here", "END of Here")
    assert not run.fleet.links["ghost"].connected
    with pytest.raises(Refused) as caught:
        await FleetClient(sock).history("Away")
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith("Away runs on host ghost, which is down ("), text
    one = await sandbox.aswarm("grep", "needle", "--agent", "Away")
    assert one.returncode == 2
    assert one_line_error(one).startswith("swarm: Away runs on host ghost, which is down")
    # searching everyone: what can be read is searched, the rest is named on stderr
    everyone = await sandbox.aswarm("grep", "haystack")
    assert everyone.returncode == 0, everyone.stderr
    assert everyone.stdout.splitlines() == [
        "Here:10: numbered line 00010 of Here: the haystack needle of Here"
    ]
    assert one_line_error(everyone).startswith(
        "swarm: not searched: Away runs on host ghost, which is down"
    )


async def test_hostile_output_reaches_the_history_as_text_and_colours_only(sandbox, start_fleet):
    await start_fleet(sandbox.layout("hostile", hostile(sandbox, "Hostile")))
    sock = sandbox.socket_path("hostile")
    lines = await history_of(sock, "Hostile", "after the storm")
    sgr = re.compile(r"\x1b\[[0-9;:]*m")
    for line in lines:
        rest = sgr.sub("", line)
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", rest), repr(line)
        assert len(rest) <= history_module.MAX_LINE + 1, len(rest)
    text = [sgr.sub("", ln) for ln in lines]
    assert "before the storm" in text and "after the storm" in text
    assert any(t.startswith("osc52 clipboard") for t in text), text[:4]
    # the 30,000-character line: joined by tmux from its wrapped rows, then cut with a mark
    long = next(t for t in text if t.startswith("xxxx"))
    assert long == "x" * history_module.MAX_LINE + "…"
    grep = await sandbox.aswarm("grep", "clipboard|bell")
    assert grep.returncode == 0, grep.stderr
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", grep.stdout), repr(grep.stdout)


async def test_a_pattern_that_backtracks_forever_is_stopped_and_the_engine_answers(
    sandbox, start_fleet, monkeypatch
):
    monkeypatch.setattr(history_module, "GREP_DEADLINE", 3.0)
    await start_fleet(sandbox.layout("bait", hostile(sandbox, "Bait"), mock_agent("Ada")))
    sock = sandbox.socket_path("bait")
    await history_of(sock, "Bait", "after the storm")
    started = time.monotonic()
    grep = asyncio.create_task(sandbox.aswarm("grep", "(a+)+$", timeout=60))
    await async_wait_until(lambda: time.monotonic() - started > 0.5, 5, "grep to be running")
    # while the child backtracks, the engine answers at once
    ls_started = time.monotonic()
    ls = await sandbox.aswarm("ls", "--json")
    assert ls.returncode == 0, ls.stderr
    assert time.monotonic() - ls_started < 2.5
    assert not grep.done()
    result = await grep
    assert result.returncode == 2
    line = one_line_error(result)
    assert "took over 3 s and was stopped" in line, line


def test_a_capture_is_bounded_in_lines_and_bytes(monkeypatch):
    monkeypatch.setattr(history_module, "MAX_BYTES", 1000)
    raw = [f"line {i:04d} \x1b[0m   ".encode() for i in range(300)] + [b"", b"   "]
    lines, cut = history_module.clean(raw, 10_000)
    assert cut and lines[-1] == "line 0299"  # trailing blanks and colours dropped
    assert sum(len(ln) + 1 for ln in lines) <= 1000
    assert [int(ln.split()[1]) for ln in lines] == list(range(300 - len(lines), 300))
    lines, cut = history_module.clean(raw[:5], 3)
    assert cut and lines == ["line 0002", "line 0003", "line 0004"]
    lines, cut = history_module.clean(raw[:5], 10)
    assert not cut and len(lines) == 5
