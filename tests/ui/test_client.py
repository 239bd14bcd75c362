"""The app works from a protocol client, never the engine: what it asks the engine (skills
rendered there, saves confirmed first), how a refusal reads, and how it lives through the
engine going away, coming back and ending. The first tests need no engine (a fake client
answers); the last ones attach to a real one."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

import swarm_tui.ui
from swarm_tui import paths
from swarm_tui.fleet.server import FleetServer
from swarm_tui.protocol.client import FleetClient, FleetView, Refused, Unreachable
from swarm_tui.protocol.models import MessageView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.command import CHECKOUT
from swarm_tui.ui.confirm import ConfirmScreen
from swarm_tui.ui.messages import MessagesScreen
from tests.ui.conftest import FakeClient, Live, plain_of, still_fleet, text_of, until

ENGINE = ("swarm_tui.fleet", "swarm_tui.hosts", "swarm_tui.tmux", "swarm_tui.agents")


def notes(app: SwarmApp) -> list[str]:
    """The notifications on screen, oldest first."""
    return [n.message for n in app._notifications]


def test_the_ui_imports_no_part_of_the_engine() -> None:
    package = Path(swarm_tui.ui.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}:{node.lineno}: {n}" for n in names if n.startswith(ENGINE)]
    assert offenders == []
    assert (package / "app.py").exists()  # the scan looked at the UI's files


async def test_a_skill_is_sent_by_name_for_the_engine_to_render(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=4))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press(
            "space",
            "right",
            "space",
            "i",
            *"/thermonuclear-review rounds=2",
            "ctrl+j",
            *"and the docs",
            "enter",
        )
        await until(lambda: client.asked("send"), what="the send")
        (sent,) = client.asked("send")
        assert sent == {
            "names": ["Gauss", "Hilbert"],
            "text": "and the docs",
            "skill": "thermonuclear-review",
            "params": {"rounds": "2"},
        }
        await until(lambda: "queued for Gauss, Hilbert" in notes(app), what="the notice")
        assert not app.marked  # sent: the marks are done with
        # a message that only starts with / is sent as written
        await pilot.press("i", *"/not-a-skill x", "enter")
        await until(lambda: len(client.asked("send")) == 2, what="the second send")
        assert client.asked("send")[1] == {
            "names": ["Hilbert"],
            "text": "/not-a-skill x",
            "skill": "",
            "params": {},
        }


async def test_skills_are_the_engines_not_this_machines(tmp_path: Path) -> None:
    """A view on a laptop completes and sends the skills of the engine's host."""
    client = FakeClient(still_fleet(tmp_path, count=2))
    del client.engine_skills["thermonuclear-review"]  # shipped here, not on that engine
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(lambda: client.asked("skills"), what="the engine's skills asked for")
        await pilot.press("i", *"/only-on", "tab")
        preview = app.screen.query_one("#prompt-skill", Static)
        await until(
            lambda: "a skill this machine lacks" in str(preview.render()),
            what="the engine's skill completed and previewed",
            detail=lambda: str(preview.render()),
        )
        await pilot.press("enter")
        await until(lambda: client.asked("send"), what="the send")
        assert client.asked("send")[0]["skill"] == "only-on-the-head-node"
        await pilot.press("i", *"/thermonuclear-review", "enter")  # only this machine has it
        await until(lambda: len(client.asked("send")) == 2, what="the second send")
        assert client.asked("send")[1]["skill"] == ""


class Refusing(FakeClient):
    """An engine that refuses every message and is gone for everything else."""

    async def send(
        self, names: list[str], text: str, skill: str = "", params: dict[str, str] | None = None
    ) -> list[MessageView]:
        raise Refused("Gauss may not message Hilbert: its talks_to lists only Boss")

    async def set_focus(self, name: str, label: str) -> None:
        raise Unreachable("no swarm engine answers on /run/ui.sock")


async def test_a_refusal_is_one_notification_and_the_view_goes_on(tmp_path: Path) -> None:
    client = Refusing(still_fleet(tmp_path, count=4))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("space", "i", *"hello", "enter")
        await until(
            lambda: any("talks_to lists only Boss" in n for n in notes(app)),
            what="the refusal",
            detail=lambda: "\n".join(notes(app)),
        )
        assert app.marked == {"Gauss"}  # nothing was sent: the marks stay
        await pilot.press("f", *" more", "enter")
        await until(
            lambda: any("no swarm engine answers" in n for n in notes(app)),
            what="the engine's absence",
        )
        await pilot.press("right")
        assert app.current_name() == "Hilbert" and app.is_running


async def test_a_save_over_an_existing_layout_asks_first(tmp_path: Path) -> None:
    client = FakeClient(still_fleet(tmp_path, count=4))
    client.existing = {"mine"}
    app = SwarmApp(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("S", "ctrl+u", *"new", "enter")
        await until(lambda: client.asked("save"), what="a save of a new name, unasked")
        assert client.asked("save") == [{"name": "new", "force": False}]
        await pilot.press("S", "ctrl+u", *"mine", "enter")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "/layouts/mine.toml exists. Overwrite it?" in plain_of(
            app.screen.query_one("#confirm-question")
        )
        await pilot.press("n")
        await until(lambda: len(app.screen_stack) == 1, what="the question answered")
        await pilot.press("S", "ctrl+u", *"mine", "enter")
        await until(lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await until(lambda: len(client.asked("save")) == 2, what="the overwrite")
        assert client.asked("save")[1] == {"name": "mine", "force": True}
        assert [a["name"] for a in client.asked("save-target")] == ["new", "mine", "mine"]


class Attachable(FakeClient):
    async def attach_argv(self, name: str) -> list[str]:
        await super().attach_argv(name)
        return ["tmux", "-L", "swarm-still", "attach", "-t", f"={name}"] if name == "Gauss" else []


async def test_attach_asks_the_engine_for_the_command(tmp_path: Path) -> None:
    client = Attachable(still_fleet(tmp_path, count=4))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("right", "t")
        await until(
            lambda: "Hilbert has no tmux window to attach to" in notes(app), what="no window"
        )
        # a test terminal cannot hand itself over: the command is said instead
        await pilot.press("left", "t")
        await until(
            lambda: any("tmux -L swarm-still attach -t =Gauss" in n for n in notes(app)),
            what="the command",
            detail=lambda: "\n".join(notes(app)),
        )
        assert [a["name"] for a in client.asked("attach-argv")] == ["Hilbert", "Gauss"]


class Talkative(FakeClient):
    async def messages(self, limit: int = 200) -> list[MessageView]:
        await super().messages(limit)
        return [
            MessageView(
                id=i,
                created=1796200000 + i,
                sender=s,
                recipient=r,
                text=t,
                status="delivered",
                updated=0,
            )
            for i, (s, r, t) in enumerate(
                [
                    ("human", "Gauss", "plan it"),
                    ("Gauss", "Hilbert", "port the lexer"),
                    ("Gauss", "Hilbert", "and the parser"),
                ],
                1,
            )
        ]


async def test_the_messages_log_loads_from_the_engine(tmp_path: Path) -> None:
    client = Talkative(still_fleet(tmp_path, count=4))
    app = SwarmApp(client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("m")
        await until(lambda: isinstance(app.screen, MessagesScreen), what="the log")
        table = app.screen.query_one(DataTable)
        await until(lambda: table.row_count == 3, what="the messages")
        assert client.asked("messages") == [{"limit": 500}]
        assert [str(c) for c in table.get_row_at(2)][2:] == [
            "Gauss",
            "Hilbert",
            "delivered",
            "and the parser",
        ]
        graph = plain_of(app.screen.query_one("#talk-graph", Static))
        assert "Gauss → Hilbert  2" in graph and "human → Gauss  1" in graph


async def test_quit_leaves_the_engine_running(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    # started as a new user does: `python3 -m swarm_tui demo` in the checkout, no `swarm`
    # on the PATH (the bootstrap runs `python -m swarm_tui.cli`)
    monkeypatch.setattr(sys, "argv", [str(CHECKOUT / "swarm_tui" / "cli.py"), "demo"])
    monkeypatch.chdir(CHECKOUT)
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("q")
        await until(lambda: not app.is_running, what="the UI to quit")
    said = str(app.return_value)
    assert f"`python3 -m swarm_tui ui {live.fleet.name}` re-attaches" in said, said
    assert f"`python3 -m swarm_tui down {live.view.layout_path}` stops them" in said, said
    assert not live.fleet.ended.is_set()
    other = FleetClient(paths.socket_path(live.fleet.name))
    try:
        view = await other.connect()
        assert list(view.agents) == list(live.fleet.agents)
    finally:
        await other.close()


async def test_the_end_of_the_fleet_ends_the_view(live: Live) -> None:
    app = SwarmApp(live.client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        live.fleet.end("fleet 'ui' stopped by `swarm down`")
        await until(lambda: not app.is_running, what="the UI to end with the fleet")
    assert app.return_value == "fleet 'ui' stopped by `swarm down`"


async def test_why_the_engine_is_unreachable_fits_an_80_column_terminal(live: Live) -> None:
    """At 80 columns the line wraps onto a second row: the cause is seen, not cut off."""
    app = SwarmApp(live.client)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await live.server.stop()  # retries then find no socket: a long reason with a path
        await until(
            lambda: "(No such file or directory)" in text_of(app.screen),
            what="the whole reason on screen",
            detail=lambda: text_of(app.screen),
        )
        assert "engine unreachable (retrying): no swarm engine answers on" in text_of(app.screen)


async def test_the_view_says_when_the_engine_is_gone_and_comes_back(live: Live) -> None:
    app = SwarmApp(live.client)
    view: FleetView = live.view
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await live.server.stop()  # as if the engine died: the stream breaks, nobody answers
        await until(
            lambda: "engine unreachable (retrying" in text_of(app.screen),
            what="the engine's absence said",
            detail=lambda: text_of(app.screen),
        )
        line = next(ln for ln in text_of(app.screen).splitlines() if "unreachable" in ln)
        # no engine starter was given (as for a view over SSH): no U offered
        assert line.strip().startswith("engine unreachable (retrying): "), line
        assert app.is_running and len(app.order) == 4  # the last picture stays
        # meanwhile the engine changed: the view shows it once it is back
        live.fleet.set_focus("Gauss", "changed while away")
        server = FleetServer(live.fleet, paths.socket_path(live.fleet.name))
        live.server = server  # the fixture stops this one
        live.fleet.listener = server.watchers
        await server.start()
        await until(
            lambda: "engine unreachable" not in text_of(app.screen),
            timeout=15,
            what="the line gone once the engine answers",
        )
        assert view.agents["Gauss"].focus == "changed while away"
        await until(
            lambda: "changed while away" in text_of(app.screen), what="the fresh snapshot drawn"
        )
        await pilot.press("f", "ctrl+u", *"after", "enter")  # and asks it as before
        await until(lambda: live.fleet.agents["Gauss"].focus == "after", what="the new focus")
