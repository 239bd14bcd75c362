"""What the sidebar says under each agent, on the real app over a real tmux fleet: a stopped
task stays until a newer one starts; a queue says how long its oldest message has waited.
The app is attached to the engine through its socket; the tests reach into the engine (in
this process) only to arrange what the engine would report."""

from __future__ import annotations

import re
from pathlib import Path

from swarm_tui.fleet.store import NewTask
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.sidebar import Sidebar
from tests.ui.conftest import Live, received, text_of, until


def agent_lines(app: SwarmApp, name: str) -> str:
    """The sidebar's lines for one agent: its state line, its focus, its note."""
    lines = text_of(app.query_one(Sidebar)).splitlines()
    start = next(i for i, ln in enumerate(lines) if f" {name} " in ln)
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:3].strip()), len(lines))
    return "\n".join(lines[start:end])


async def test_a_stopped_task_stays_in_the_sidebar_until_a_newer_one_starts(live: Live) -> None:
    store = live.store
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        old = store.add_task("Gauss", NewTask(spec="port the parser", review_on_idle=False), "test")
        store.update_task(old, status="stopped", rounds=5, reasons="5 rounds, still incomplete")
        await until(
            lambda: "■ stopped r5: 5 rounds, still" in agent_lines(app, "Gauss"),
            what="the stopped task in the sidebar",
            detail=lambda: agent_lines(app, "Gauss"),
        )
        # a newer task: the stopped one shows until the new one is under way
        new = live.fleet.tasks.add(
            "Gauss", NewTask(spec="port the lexer", review_on_idle=False), origin="test"
        )
        await until(
            lambda: getattr(store.task(new), "status", None) == "in-progress",
            what="the new task delivered",
        )
        await until(
            lambda: "▸ in-progress" in agent_lines(app, "Gauss"), what="the new task in the sidebar"
        )
        assert "stopped" not in agent_lines(app, "Gauss")


async def test_the_sidebar_says_how_long_the_oldest_message_has_waited(
    slow: Live, tmp_path: Path
) -> None:
    gauss = slow.fleet.agents["Gauss"]
    app = SwarmApp(slow.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(lambda: gauss.tracker.ready, what="Gauss ready")
        first = slow.fleet.send(["Gauss"], "a long job")[0]
        await until(lambda: received(tmp_path, "Gauss") == ["a long job"], what="delivered")
        # settled: the engine's count of Gauss's queue no longer holds it
        await until(
            lambda: getattr(slow.store.message(first.id), "status", "") == "delivered",
            what="the first message settled",
        )
        second = slow.fleet.send(["Gauss"], "2nd")[0]
        # as if the second had been written three minutes ago (the engine reports the
        # change with the next one's)
        gauss.waiting[second.id] -= 185
        slow.fleet.send(["Gauss"], "3rd")
        await until(
            lambda: re.search(r"✉2 3m(\d+s)? working", agent_lines(app, "Gauss")),
            what="✉2 3m… for Gauss",
            detail=lambda: agent_lines(app, "Gauss"),
        )
        await pilot.pause()
        assert "✉" not in agent_lines(app, "Hilbert")


async def test_the_judge_pane_never_squeezes_out_the_tiles(live: Live) -> None:
    """With tasks the judge pane shows by itself, but only where a tile still fits beside
    it; J shows or hides it at any size."""
    from swarm_tui.ui.judge import JudgePane
    from swarm_tui.ui.tiles import MIN_TILE_W

    live.store.add_task("Gauss", NewTask(spec="port the parser", review_on_idle=False), "test")
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(JudgePane)
        await until(lambda: app._grid.size.width > 0, what="a laid out grid")
        await pilot.pause()
        assert not pane.display and app._grid.size.width >= MIN_TILE_W
        await pilot.resize_terminal(200, 55)
        await until(lambda: pane.display, what="the judge pane on a wide screen")
        assert app._grid.size.width >= MIN_TILE_W
        await pilot.press("J")  # the human's choice holds at any size
        await until(lambda: not pane.display, what="J hides it")
        await pilot.resize_terminal(80, 24)
        await pilot.press("J")
        await until(lambda: pane.display, what="J shows it on a small screen too")
