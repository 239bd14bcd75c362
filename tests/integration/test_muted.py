"""A busy agent off screen is muted with a real tmux: its `%output` stops reaching the engine
while it keeps printing (tmux's activity reports keep it "working"), and flows again when
it goes quiet (then it is seen idle) or comes on screen."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from swarm_tui.fleet.links import ACTIVITY_SUB
from swarm_tui.testing import async_wait_until, shell_agent
from swarm_tui.tmux.protocol import Event, Output, SubscriptionChanged

pytestmark = pytest.mark.integration

PRINTER = """import os, sys, time
begin, stop, go = sys.argv[1:4]
print("ready", flush=True)
while not os.path.exists(begin):
    time.sleep(0.05)
while not os.path.exists(stop):
    print("tick", time.time(), flush=True)
    time.sleep(0.1)
print("resting", flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
while True:
    print("again", time.time(), flush=True)
    time.sleep(0.1)
"""


async def test_a_busy_agent_off_screen_is_muted_and_continued(sandbox, start_fleet, tmp_path: Path):
    script = tmp_path / "printer.py"
    script.write_text(PRINTER)
    agents = []
    for name in ("Quiet", "Shown"):
        command = (
            f"{sys.executable} {script} {tmp_path / name}.begin "
            f"{tmp_path / name}.stop {tmp_path / name}.go"
        )
        agents.append(shell_agent(name, command))
    run = await start_fleet(sandbox.layout("muted", *agents), visible=False)
    fleet = run.fleet
    quiet, shown = fleet.agents["Quiet"], fleet.agents["Shown"]
    outputs: Counter[str] = Counter()
    reports: Counter[str] = Counter()
    states: set[str] = set()
    links = fleet.host_links
    on_event = links.on_event

    def counting(link, event: Event) -> None:  # type: ignore[no-untyped-def]
        if isinstance(event, Output):
            outputs[event.pane] += 1
        elif isinstance(event, SubscriptionChanged) and event.name == ACTIVITY_SUB:
            reports[event.pane] += 1
            if event.pane == quiet.pane:
                states.add(quiet.state.value)
        on_event(link, event)

    links.on_event = counting  # type: ignore[method-assign]
    await run.wait_states("idle")
    for name in ("Quiet", "Shown"):
        (tmp_path / f"{name}.begin").touch()
    await async_wait_until(
        lambda: quiet.muted and shown.muted, 12, "both printers muted off screen", run.screens
    )
    # from tmux's first activity report after the mute, nothing more of their output comes
    await async_wait_until(
        lambda: reports[quiet.pane] >= 1 and reports[shown.pane] >= 1,
        5,
        "an activity report for each",
    )
    outputs.clear()
    states.clear()
    base = reports[quiet.pane]
    await async_wait_until(
        lambda: reports[quiet.pane] >= base + 3, 6, "three more seconds of reported activity"
    )
    assert outputs[quiet.pane] == 0 and outputs[shown.pane] == 0, outputs
    assert states == {"working"}, states  # reports a second apart never read as idle

    fleet.set_visible({"Shown"})  # on screen: continued at once, its lines come again
    await async_wait_until(
        lambda: outputs[shown.pane] >= 3, 3, "the shown tile's output to flow again", run.screens
    )
    assert not shown.muted

    (tmp_path / "Quiet.stop").touch()  # it goes quiet: unmuted, read, idle
    await async_wait_until(
        lambda: quiet.state.value == "idle", 10, "the quiet agent seen idle", run.screens
    )
    assert not quiet.muted and "resting" in "\n".join(quiet.plain_screen())
    outputs.clear()
    (tmp_path / "Quiet.go").touch()  # and its next output is a doorbell again
    await async_wait_until(
        lambda: outputs[quiet.pane] >= 3, 3, "its output to flow again after it rested", run.screens
    )
    await async_wait_until(lambda: quiet.state.value == "working", 5, "working again", run.screens)
