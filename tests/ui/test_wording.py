"""What the view says to a new user: the help lists every key once (the palette's, the
message log's enter, the history's sideways scroll) and every border; a one-line dialog says
what enter does; an answer names its option whole or ends with `…`; quitting names a
command that works; a stall message is one line per paragraph."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from swarm_tui.protocol.models import AgentView
from swarm_tui.ui.app import SwarmApp
from swarm_tui.ui.asking import answered_line, shown_options
from swarm_tui.ui.command import CHECKOUT, swarm_command
from swarm_tui.ui.help import HelpScreen
from swarm_tui.ui.prompt import FocusScreen
from tests.ui.conftest import FakeClient, still_fleet, text_of, until


async def help_text(tmp_path: Path) -> str:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=3)))
    async with app.run_test(size=(160, 100)) as pilot:
        await pilot.press("question_mark")
        await until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        await pilot.pause()
        return text_of(app.screen.query_one("#help-table"))


async def test_help_lists_the_palette_enter_sideways_and_each_border(tmp_path: Path) -> None:
    text = await help_text(tmp_path)
    assert "ctrl+p Palette" in text
    log = text.split("the messages log")[1].split("the agent's history")[0]
    assert "enter Open" in log and "esc / m / q Close" in log
    history = text.split("the agent's history")[1]
    assert "← / → Scroll sideways" in history
    assert "heavy (┏━┓) when it needs you" in " ".join(text.split())
    # pgup and [ are one row, each with what it does zoomed
    assert "pgup / [ Prev page" in text and "Prev page or agent" not in text


@pytest.mark.parametrize(
    ("verb", "shown"),
    [
        ("go", "enter go · esc cancel"),
        ("search", "enter search · esc cancel"),
        ("filter", "enter filter · esc cancel"),
    ],
)
async def test_a_one_line_dialog_says_what_enter_does(
    tmp_path: Path, verb: str, shown: str
) -> None:
    app = SwarmApp(FakeClient(still_fleet(tmp_path, count=3)))
    async with app.run_test(size=(120, 40)):
        app.push_screen(FocusScreen("", "", title="a title", verb=verb))
        await until(
            lambda: isinstance(app.screen, FocusScreen) and app.screen.query("#prompt-help"),
            what="the dialog",
        )
        hint = app.screen.query_one("#prompt-help")
        await until(lambda: text_of(hint) == shown, what=shown, detail=lambda: text_of(hint))
        assert "save" not in text_of(app.screen)


SCREEN = [
    "╭" + "─" * 42 + "╮",
    "│ Run `pytest -q`?",
    "│   1. Yes",
    "│   2. No, and tell the agent what to do dif",
    "╰" + "─" * 42 + "╯",
]


def test_an_option_cut_by_the_window_ends_with_an_ellipsis() -> None:
    agent = AgentView(
        name="Turing",
        role="worker",
        state="needs-permission",
        options=[("1", "Yes"), ("2", "No, and tell the agent what to do dif")],
    )
    seen = shown_options(agent, SCREEN)
    assert seen == [("1", "Yes"), ("2", "No, and tell the agent what to do…")]
    reply: dict[str, object] = {"option": "2. No, and tell the agent what to do dif"}
    assert (
        answered_line("Turing", reply, seen)
        == "Turing: answered 2. No, and tell the agent what to do…"
    )
    # the option whole when the human saw it whole, whatever the engine read after
    whole = [("2", "No, and tell the agent what to do differently")]
    assert (
        answered_line("Turing", {"option": "2. No, and tell"}, whole)
        == "Turing: answered 2. No, and tell the agent what to do differently"
    )
    assert (
        answered_line("Turing", {"option": "1. Yes", "asks": "run it?"}, seen)
        == "Turing: answered 1. Yes; it asks again: run it?"
    )


def test_the_command_to_come_back_is_one_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = str(CHECKOUT / "swarm_tui" / "cli.py")  # `python3 -m swarm_tui demo` runs this
    assert swarm_command("ui", "demo", argv0=cli, cwd=CHECKOUT) == "python3 -m swarm_tui ui demo"
    assert (
        swarm_command("ui", "demo", argv0=cli, cwd=tmp_path)
        == f"cd {CHECKOUT} && python3 -m swarm_tui ui demo"
    )
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert (
        swarm_command("ui", "my fleet", argv0=".venv/bin/swarm", cwd=CHECKOUT)
        == ".venv/bin/swarm ui 'my fleet'"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    swarm = bin_dir / "swarm"
    swarm.write_text("#!/bin/sh\n")
    swarm.chmod(swarm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin")
    assert swarm_command("ui", "demo", argv0=str(swarm), cwd=tmp_path) == "swarm ui demo"


def test_the_stall_message_has_one_line_per_paragraph() -> None:
    text = (CHECKOUT / "skills" / "stall.md").read_text()
    body = text.split("\n---\n", 1)[1].strip()
    for paragraph in body.split("\n\n"):
        assert "\n" not in paragraph.strip(), paragraph
