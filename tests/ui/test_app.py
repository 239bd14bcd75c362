"""The real app, driven by Pilot, attached through the socket to a real engine running a tmux
fleet of mock agents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Input, TextArea

from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.prompt import PromptScreen
from swarm_tui.ui.sidebar import Sidebar
from swarm_tui.ui.tiles import AgentTile
from tests.ui.conftest import Live, plain_of, received, text_of, until


def shows_own_screen(tile: AgentTile, name: str) -> Callable[[], bool]:
    return lambda: any(f"· {name}" in line for line in tile._lines)


def shown_tiles(app: SwarmApp) -> list[AgentTile]:
    return [t for t in app.query(AgentTile) if t.agent is not None and t.display]


async def test_tiles_show_each_agents_live_output(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        tiles = shown_tiles(app)
        assert {t.agent.name for t in tiles if t.agent} == set(live.fleet.agents)
        for tile in tiles:
            assert tile.agent is not None
            name = tile.agent.name
            await until(shows_own_screen(tile, name), what=f"{name}'s screen in its tile")
        # what the tile draws is the agent's screen, not markup: the line renders as written
        tile = tiles[0]
        rendered = "".join(seg.text for y in range(tile.size.height) for seg in tile.render_line(y))
        assert "mock-agent 1.0" in rendered


async def test_prompt_injects_into_selected_agent(live: Live, tmp_path: Path) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(lambda: live.fleet.agents["Hilbert"].tracker.ready, what="Hilbert ready")
        await pilot.press("right")  # Gauss -> Hilbert
        assert app.current_name() == "Hilbert"
        await pilot.press("i")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"fix [red]the[/] parser")
        await pilot.press("ctrl+j")
        await pilot.press(*"line two")
        await pilot.press("enter")
        await until(lambda: received(tmp_path, "Hilbert"), what="Hilbert to receive it")
        assert received(tmp_path, "Hilbert")[-1] == "fix [red]the[/] parser\nline two"
        assert received(tmp_path, "Gauss") == []


async def test_prompt_to_a_role_and_to_marked_agents(live: Live, tmp_path: Path) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(
            lambda: all(a.tracker.ready for a in live.fleet.agents.values()),
            what="all agents ready",
        )
        await pilot.press("r")  # starts on the selected agent's role: planner (Gauss)
        assert text_of(app.screen.query_one("#prompt-target")).startswith("To: role planner")
        await pilot.press(*"plan it", "enter")
        await until(lambda: received(tmp_path, "Gauss") == ["plan it"], what="planner message")
        # mark Noether and Euler, then prompt the selection
        await pilot.press("right", "right", "space", "right", "space", "i")
        assert "Noether, Euler" in text_of(app.screen.query_one("#prompt-target"))
        await pilot.press(*"both of you", "enter")
        await until(lambda: received(tmp_path, "Euler") == ["both of you"], what="Euler")
        await until(lambda: received(tmp_path, "Noether") == ["both of you"], what="Noether")
        assert received(tmp_path, "Hilbert") == []


async def test_focus_label_edit_shows_in_sidebar_and_is_kept(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f")
        field = app.screen.query_one(Input)
        assert field.value == "focus of Gauss"
        await pilot.press("ctrl+u", *"benchmarks only", "enter")
        await until(lambda: live.fleet.agents["Gauss"].focus == "benchmarks only")
        assert live.store.focus("Gauss") == "benchmarks only"
        sidebar = app.query_one(Sidebar)
        await until(
            lambda: "benchmarks only" in text_of(sidebar),
            what="the sidebar's label",
            detail=lambda: text_of(sidebar),
        )
        tile = next(t for t in shown_tiles(app) if t.agent and t.agent.name == "Gauss")
        await until(lambda: tile.border_subtitle == "benchmarks only", what="the tile's label")


async def test_zoom_shows_one_agent_full_size(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        small = shown_tiles(app)[0].size
        await pilot.press("down")  # next row (or next tile in a one-row grid)
        name = app.current_name()
        await pilot.press("enter")
        await pilot.pause()
        tiles = shown_tiles(app)
        assert [t.agent.name for t in tiles if t.agent] == [name]
        assert tiles[0].size.width > small.width and tiles[0].size.height > small.height
        await pilot.press("enter")
        await pilot.pause()
        assert len(shown_tiles(app)) == len(live.fleet.agents)


async def test_pages_when_the_fleet_does_not_fit(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:  # room for few tiles
        await pilot.pause()
        per_page = app.per_page
        assert per_page < len(live.fleet.agents)
        first = {t.agent.name for t in shown_tiles(app) if t.agent}
        await pilot.press("pagedown")
        await pilot.pause()
        second = {t.agent.name for t in shown_tiles(app) if t.agent}
        assert second and not first & second
        assert app.current_name() in second


async def test_empty_prompt_is_refused_and_sends_nothing(live: Live, tmp_path: Path) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("i", "space", "enter")
        assert isinstance(app.screen, PromptScreen)  # still open: nothing to send
        assert app.screen.query_one(TextArea).text == " "
        # the fleet view keeps drawing underneath an open prompt
        app._draw_sidebar()
        app._show_page()
        await pilot.press("escape")
        assert not isinstance(app.screen, PromptScreen)
        assert [m for m in live.store.messages() if m.sender == "human"] == []


async def test_prompt_inserts_a_skill_with_completion_and_preview(
    live: Live, tmp_path: Path
) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(lambda: live.fleet.agents["Gauss"].tracker.ready, what="Gauss ready")
        await pilot.press("i", *"/thermo")
        preview = app.screen.query_one("#prompt-skill")
        assert "/thermonuclear-review" in plain_of(preview)
        await pilot.press("tab")  # completes the skill's name, not the target
        assert app.screen.query_one(TextArea).text == "/thermonuclear-review "
        assert text_of(app.screen.query_one("#prompt-target")) == "To: Gauss"
        assert "params: rounds=3, scope=the change" in plain_of(preview)
        await pilot.press(*"rounds=2", "enter")
        await until(lambda: received(tmp_path, "Gauss"), what="the skill to arrive")
        (text,) = received(tmp_path, "Gauss")
        assert text.startswith("Review the change from scratch") and "Do 2 rounds." in text
