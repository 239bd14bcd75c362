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

# a permission dialog and an input box drawn as full-width boxes and rules (as Claude Code,
# Codex and the mock draw them); a row that fills the window is followed at once by the next,
# where the terminal's autowrap has moved the cursor (tmux marks that row wrapped), a shorter
# one by a new line
DIALOG = r"""
import os, sys
cols = os.get_terminal_size().columns
rule = "\u2500" * cols
rows = [
    f"a dialog at {cols} columns",
    "\u256d" + "\u2500" * (cols - 2) + "\u256e",
    "\u2502 Do you want to run `pytest -q`?",
    "\u2502 \u276f 1. Yes",
    "\u2502   2. No, and tell the agent what to do differently (esc)",
    "\u2570" + "\u2500" * (cols - 2) + "\u256f",
    rule,
    "\u276f fix the flaky test",
    rule,
    "  95% context left",
    "END of the dialog",
]
for row in rows:
    sys.stdout.write(row if len(row) == cols else row + "\r\n")
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

    await async_wait_until(
        read, 20, f"{until_text!r} in {name}'s history", lambda: f"last: {last[0][-5:]}"
    )
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


async def test_rows_that_fill_the_window_are_shown_as_the_window_shows_them(sandbox, start_fleet):
    """A box's top row and a rule fill the window's width: tmux marks them wrapped, and
    joined with the row below (`capture-pane -J`) they made one line far wider than the
    window (`│ ❯ 1. Yes` far right of the box's top; grep printed rule, ❯ and rule as one
    line). History shows the rows the window showed, and grep prints them one by one."""
    script = sandbox.files / "dialog.py"
    script.write_text(DIALOG)
    await start_fleet(
        sandbox.layout("box", shell_agent("Dialog", command=f"{sys.executable} {script}"))
    )
    sgr = re.compile(r"\x1b\[[0-9;:]*m")
    lines = await history_of(sandbox.socket_path("box"), "Dialog", "END of the dialog")
    text = [sgr.sub("", ln) for ln in lines]
    start = next(i for i, t in enumerate(text) if t.startswith("a dialog at "))
    cols = int(text[start].split()[3])
    rule = "─" * cols
    assert text[start:] == [
        f"a dialog at {cols} columns",
        "╭" + "─" * (cols - 2) + "╮",
        "│ Do you want to run `pytest -q`?",
        "│ ❯ 1. Yes",
        "│   2. No, and tell the agent what to do differently (esc)",
        "╰" + "─" * (cols - 2) + "╯",
        rule,
        "❯ fix the flaky test",
        rule,
        "  95% context left",
        "END of the dialog",
    ]
    found = await sandbox.aswarm("grep", "❯", "--agent", "Dialog")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == [
        f"Dialog:{start + 4}: │ ❯ 1. Yes",
        f"Dialog:{start + 8}: ❯ fix the flaky test",
    ]


async def test_empty_rows_a_shorter_window_pushed_into_the_history_are_left_out(
    sandbox, start_fleet
):
    """The mock (as the demo runs it) pads its screen between transcript and input box; a
    tile's first sizing makes its 40-row window 16 rows, and tmux pushes the top 24 rows,
    padding and all, into the history, just above the screen: the first page up showed
    mostly blank rows. They are left out; the screen is shown as the window shows it."""
    run = await start_fleet(
        sandbox.layout("blank", mock_agent("Tall", "--scrollback", "--backlog", "3"))
    )
    await run.wait_states("idle")
    sock = sandbox.socket_path("blank")
    await history_of(sock, "Tall", "% context left")
    run.fleet.set_sizes({"Tall": (60, 16)})
    sgr = re.compile(r"\x1b\[[0-9;:]*m")
    client = FleetClient(sock)
    header = "✻ mock-agent"

    async def pushed_and_redrawn() -> list[str] | None:
        text = [sgr.sub("", ln) for ln in (await client.history("Tall")).lines]
        redrawn = [i for i, t in enumerate(text) if t.startswith(header)]
        return text if len(redrawn) == 2 and "% context left" in text[-1] else None

    text = await async_wait_until(pushed_and_redrawn, 20, "Tall's window made 16 rows")
    screen = max(i for i, t in enumerate(text) if t.startswith(header))
    above, shown = text[:screen], text[screen:]
    assert above[-1].strip(), "\n".join(text)  # no blank rows end the history above it
    assert [t for t in above if "backlog line" in t] == [
        f"  backlog line {i:05d} of Tall" for i in (1, 2, 3)
    ]
    # the screen itself, as the window shows it: 16 rows, its padding kept
    assert len(shown) == 16 and shown[-1].startswith("  100% context left"), "\n".join(text)
    assert "" in shown


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
    # the 30,000-character line: the rows the window wrapped it into, as it showed them
    rows = [t for t in text if t and set(t) == {"x"}]
    assert "".join(rows) == "x" * 30000
    assert max(len(t) for t in rows) == 120  # the window's width (no view sizes it)
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


async def test_an_agent_reads_only_the_histories_of_those_it_may_message(sandbox, start_fleet):
    """Lu may message Beta (talks_to): it reads Beta's history and its own, greps only
    those (and says which it left out); Alpha's is refused. The human reads all."""
    run = await start_fleet(
        sandbox.layout(
            "talk",
            printer(sandbox, "Alpha", 300, 120),
            printer(sandbox, "Beta", 300, 40),
            shell_agent("Lu", talks_to=["Beta"]),
        )
    )
    sock = sandbox.socket_path("talk")
    await history_of(sock, "Alpha", "END of Alpha")
    await history_of(sock, "Beta", "END of Beta")
    client = FleetClient(sock)
    lu = run.fleet.agents["Lu"].token
    with pytest.raises(
        Refused,
        match=r"^Alpha's history may be read by the human and the agents that may message "
        r"it \(the layout's talks_to\): nothing was read$",
    ):
        await client.request({"op": "history", "agent": "Alpha", "token": lu})
    beta = await client.request({"op": "history", "agent": "beta", "token": lu})
    assert any("END of Beta" in ln for ln in beta["lines"])
    await client.request({"op": "history", "agent": "Lu", "token": lu})  # its own
    found = await client.request({"op": "grep", "pattern": "haystack needle", "token": lu})
    assert [h["agent"] for h in found["hits"]] == ["Beta"]
    assert found["skipped"] == ["Alpha: the layout's talks_to does not let who asked read them"]
    with pytest.raises(Refused, match=r"^Alpha's history may be read by the human"):
        await client.request({"op": "grep", "pattern": "x", "agent": "Alpha", "token": lu})
    everyone = await client.grep("haystack needle")  # the human
    assert [h.agent for h in everyone.hits] == ["Alpha", "Beta"] and not everyone.skipped


async def test_history_and_grep_requests_are_bounded_and_one_more_is_refused(
    sandbox, start_fleet, monkeypatch
):
    """Requests that pile up (agents grepping in a loop, a read stuck on a slow link) are
    read MAX_READS at a time; one more is refused at once, not queued."""
    await start_fleet(sandbox.layout("pile", mock_agent("Ada")))
    client = FleetClient(sandbox.socket_path("pile"))
    release = asyncio.Event()
    reading = [0]

    async def slow_read(fleet, agent, lines):
        reading[0] += 1
        await release.wait()
        return ["a line"], False

    monkeypatch.setattr(history_module, "read_history", slow_read)
    limit = history_module.MAX_READS
    held = [asyncio.create_task(client.history("Ada")) for _ in range(limit)]
    await async_wait_until(lambda: reading[0] == limit, 10, f"{limit} reads under way")
    with pytest.raises(
        Refused,
        match=rf"^{limit} history or grep requests are being read now, "
        "swarm's limit: nothing was read; try again in a few seconds$",
    ):
        await asyncio.wait_for(client.grep("x"), 10)
    with pytest.raises(Refused, match="being read now"):
        await asyncio.wait_for(client.history("Ada"), 10)
    assert reading[0] == limit
    release.set()
    assert [(await t).lines for t in held] == [["a line"]] * limit
    assert (await asyncio.wait_for(client.history("Ada"), 10)).lines == ["a line"]


def test_the_node_client_greps_too(tmp_path):
    """`swarm grep` is one of the verbs of the stdlib client copied alone to every node
    (swarm_tui/client.py, run by path): its trouble is exit 2 and one line there too."""
    client = Path(history_module.__file__).resolve().parents[1] / "client.py"
    env = {"PATH": "/usr/bin:/bin", "SWARM_HOME": str(tmp_path)}

    def node_swarm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-I", str(client), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            cwd=tmp_path,
        )

    two = node_swarm("grep", "x", "y")
    assert two.returncode == 2 and "usage: swarm grep PATTERN" in one_line_error(two)
    bad = node_swarm("grep", "(unclosed")
    assert bad.returncode == 2 and "grep: bad pattern '(unclosed'" in one_line_error(bad)
    nobody = node_swarm("grep", "x")
    assert nobody.returncode == 2 and "no swarm is running" in one_line_error(nobody)
