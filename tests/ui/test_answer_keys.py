"""Answering a permission dialog from the fleet view: the tile shows the question and its
options, the sidebar the question, `y` / `n` / a number answer the selected agent through
the engine, and the wait counts up in the tile's title and the sidebar."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from swarm_tui.protocol.client import FleetView, Refused
from swarm_tui.protocol.models import AgentView
from swarm_tui.ui import actions as actions_module
from swarm_tui.ui import app as app_module
from swarm_tui.ui import sidebar as sidebar_module
from swarm_tui.ui import tiles as tiles_module
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.sidebar import Sidebar
from swarm_tui.ui.tiles import AgentTile
from tests.ui.conftest import (
    FAST,
    FakeClient,
    start_live,
    still_fleet,
    stop_live,
    text_of,
    until,
    write_layout,
)

# every turn asks before it runs a command, a second or so in
ASKS = FAST.replace('"--permission-rate", "0"', '"--permission-rate", "1"').replace(
    '"--work", "0.4"', '"--work", "3"'
)


def tile_of(app: SwarmApp, name: str) -> AgentTile:
    return next(t for t in app._tiles if t.name_shown == name)


def notes(app: SwarmApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_the_tile_shows_the_dialog_and_y_answers_it(tmp_path: Path, swarm_home: Path) -> None:
    live = await start_live(
        write_layout(tmp_path, ["Gauss", "Hilbert"], args={"Gauss": ASKS}), swarm_home
    )
    try:
        app = SwarmApp(live.client)
        async with app.run_test(size=(160, 48)) as pilot:
            await until(lambda: live.fleet.agents["Gauss"].tracker.ready, 10, "Gauss ready")
            live.fleet.send(["Gauss"], "build it")
            await until(lambda: live.view.agents["Gauss"].options, 15, "Gauss's dialog in the view")
            question = live.view.agents["Gauss"].question
            tile = tile_of(app, "Gauss")
            await until(
                lambda: "[y/n/1-2]" in text_of(tile), 5, "the banner", lambda: text_of(tile)
            )
            shown = text_of(tile)
            assert f" ? {question}" in shown
            assert " [y/n/1-2] 1 Yes · 2 No, and tell the agent… · t attaches" in shown
            assert "needs-permission" in str(tile.border_title)
            await until(
                lambda: f"[y/n/1-2] asks: {question}" in text_of(app.query_one(Sidebar)),
                5,
                "the question in the sidebar",
            )
            assert "[y/n" not in text_of(tile_of(app, "Hilbert"))  # Hilbert asks nothing
            assert app.current_name() == "Gauss"
            await pilot.press("y")
            await until(
                lambda: "Gauss: answered 1. Yes" in notes(app),
                10,
                "the answer said",
                lambda: repr(notes(app)),
            )
            assert f"⎿ Allowed: {question}" in "\n".join(live.fleet.agents["Gauss"].plain_screen())
            await until(
                lambda: "[y/n/1-2]" not in text_of(tile),
                10,
                "the banner to go once the dialog has",
                lambda: text_of(tile),
            )
    finally:
        await stop_live(live)


class AnsweringClient(FakeClient):
    """A still fleet; answers are recorded, and refused as the engine would refuse them;
    while `held` is set, an answer waits for it to be cleared."""

    refuse = ""
    held: asyncio.Event | None = None

    async def answer(
        self,
        name: str,
        choice: str,
        question: str | None = None,
        options: Iterable[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        self._asked(
            "answer",
            name=name,
            choice=choice,
            question=question,
            options=None if options is None else [tuple(o) for o in options],
        )
        if self.held is not None:
            await self.held.wait()
        if self.refuse:
            raise Refused(self.refuse)
        return {"ok": True, "option": f"{choice}. picked", "asks": ""}


def asking_view(tmp_path: Path, waited: float) -> FleetView:
    """The still fleet, its agent Noether asking with three options since `waited` s ago."""
    view = still_fleet(tmp_path, count=4)
    old = view.agents["Noether"]
    assert old.state == "needs-permission"
    view.agents["Noether"] = AgentView.model_validate(
        {
            **old.model_dump(),
            "question": "Do you want to proceed? (Bash command: make)",
            "options": [
                ("1", "Yes"),
                ("2", "Yes, and don't ask again for make commands"),
                ("3", "No"),
            ],
            "state_since": time.time() - waited,
        }
    )
    return view


async def test_keys_answer_the_selected_agent_and_only_one_that_asks(tmp_path: Path) -> None:
    client = AnsweringClient(asking_view(tmp_path, 5))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.select_name("Gauss")  # working: y, n and numbers answer nothing
        for key in ("y", "n", "2"):
            await pilot.press(key)
        assert client.asked("answer") == []
        await until(
            lambda: any("Gauss is working: no dialog to answer" in n for n in notes(app)),
            5,
            "why nothing was answered",
        )
        app.select_name("Noether")
        await pilot.press("2")
        await until(lambda: "Noether: answered 2. picked" in notes(app), 5, "the first answer")
        await pilot.press("n")
        await until(lambda: len(client.asked("answer")) == 2, 5, "two answers")
        question = "Do you want to proceed? (Bash command: make)"
        options = [("1", "Yes"), ("2", "Yes, and don't ask again for make commands"), ("3", "No")]
        assert client.asked("answer") == [  # the dialog as the view showed it
            {"name": "Noether", "choice": "2", "question": question, "options": options},
            {"name": "Noether", "choice": "no", "question": question, "options": options},
        ]
        # a refusal is one line, said as the engine said it
        client.refuse = "Noether (claude)'s dialog changed: it now asks 'x'; nothing was typed"
        await pilot.press("y")
        await until(
            lambda: any(
                "Noether not answered: Noether (claude)'s dialog changed" in n for n in notes(app)
            ),
            5,
            "the refusal",
        )
        # the keys that move the selection still do: digits took none of them
        await pilot.press("l")
        assert app.current_name() == "Euler"


async def test_the_wait_counts_up_in_the_tile_and_the_sidebar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No event comes while an agent waits on its dialog: the clocks move by themselves."""
    clock = [time.time()]
    fake_time = SimpleNamespace(time=lambda: clock[0], monotonic=time.monotonic)
    monkeypatch.setattr(tiles_module, "time", fake_time)
    monkeypatch.setattr(sidebar_module, "time", fake_time)
    monkeypatch.setattr(app_module, "time", fake_time)  # (its tick: has a clock moved?)
    app = SwarmApp(AnsweringClient(asking_view(tmp_path, 4 * 60 + 5)))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        tile = tile_of(app, "Noether")
        sidebar = app.query_one(Sidebar)
        assert "needs-permission 4m" in str(tile.border_title)
        assert "needs-permission 4m" in text_of(sidebar)
        clock[0] += 3 * 60
        await until(
            lambda: "needs-permission 7m" in str(tile.border_title),
            5,
            "the tile's clock to move on",
            lambda: str(tile.border_title),
        )
        await until(
            lambda: "needs-permission 7m" in text_of(sidebar), 5, "the sidebar's clock to move on"
        )


async def test_keys_for_an_agent_wait_while_an_answer_to_it_is_on_its_way(
    tmp_path: Path,
) -> None:
    """A second y (or a number) pressed before the first answer came back would go to the
    dialog after it, which the human has not seen: it is not sent."""
    client = AnsweringClient(asking_view(tmp_path, 5))
    client.held = asyncio.Event()
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.select_name("Noether")
        await pilot.press("y")
        await until(lambda: len(client.asked("answer")) == 1, 5, "the first answer sent")
        await pilot.press("2", "y")
        await until(
            lambda: "Noether: an answer is on its way; wait for it" in notes(app),
            5,
            "why the key did nothing",
        )
        assert [a["choice"] for a in client.asked("answer")] == ["yes"]
        client.held.set()
        await until(lambda: "Noether: answered yes. picked" in notes(app), 5, "the answer")
        await pilot.press("n")  # back: the next key answers again
        await until(lambda: len(client.asked("answer")) == 2, 5, "the next answer sent")
        assert client.asked("answer")[1]["choice"] == "no"


async def test_no_answer_while_the_judge_pane_hides_the_dialog(tmp_path: Path) -> None:
    """Below 160 columns the judge pane lies over the grid: the selected agent's dialog is
    out of sight, so y, n and numbers answer nothing."""
    client = AnsweringClient(asking_view(tmp_path, 5))
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.select_name("Noether")
        await pilot.press("J")
        await until(lambda: app._judge.display and not app._judge.docked, 5, "the judge over")
        await pilot.press("y", "1", "n")
        await pilot.pause()
        assert client.asked("answer") == []
        await pilot.press("escape")
        await until(lambda: not app._judge.display, 5, "the judge pane closed")
        await pilot.press("y")  # in sight again: y answers
        await until(lambda: len(client.asked("answer")) == 1, 5, "the answer")


async def test_a_key_pressed_twice_never_answers_an_agent_the_selection_moved_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the filter `needs`, answering an agent lets it leave the list and the selection
    moves to the next agent that asks: a second `y` (a double press, a key held a moment)
    answered that agent's dialog unread. Within two seconds of such a move the key says so,
    and so does every repeat of it (a held key, a quick triple press); pressed again after a
    pause, it answers. The keys' clock is the test's."""
    clock = [1000.0]
    monkeypatch.setattr(actions_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    view = still_fleet(tmp_path)  # Noether and Kovalevskaya ask
    client = AnsweringClient(view)
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"needs", "enter")
        await until(
            lambda: app.order == ["Noether", "Kovalevskaya"],
            5,
            "the filter",
            lambda: repr(app.order),
        )
        app.select_name("Noether")
        await pilot.press("y")
        await until(lambda: len(client.asked("answer")) == 1, 5, "Noether answered")
        # the engine reports Noether at work again: it leaves the filter
        view.agents["Noether"] = view.agents["Noether"].model_copy(update={"state": "working"})
        app.bridge.agent_changed("Noether")
        await until(lambda: app.current_name() == "Kovalevskaya", 5, "the selection moved")
        clock[0] += 0.3
        await pilot.press("y")
        await until(
            lambda: any("moved to Kovalevskaya by itself" in n for n in notes(app)),
            5,
            "why the key answered nothing",
            lambda: repr(notes(app)),
        )
        for _ in range(4):  # the key held: it repeats every 0.5 s, past the two seconds
            clock[0] += 0.5
            await pilot.press("y")
        await pilot.pause()
        assert [a["name"] for a in client.asked("answer")] == ["Noether"]
        assert sum("by itself" in n for n in notes(app)) == 1  # said once, not per repeat
        clock[0] += 1.5  # looked at its dialog, then pressed again: it answers
        await pilot.press("y")
        await until(lambda: len(client.asked("answer")) == 2, 5, "Kovalevskaya answered")
        assert client.asked("answer")[-1]["name"] == "Kovalevskaya"


async def test_a_move_the_human_made_answers_at_once(tmp_path: Path) -> None:
    client = AnsweringClient(still_fleet(tmp_path))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"needs", "enter")
        await until(lambda: app.order == ["Noether", "Kovalevskaya"], 5, "the filter")
        await pilot.press("l")  # the human moves to Kovalevskaya
        assert app.current_name() == "Kovalevskaya"
        await pilot.press("y")
        await until(lambda: len(client.asked("answer")) == 1, 5, "Kovalevskaya answered")
