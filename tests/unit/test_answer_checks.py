"""The engine's checks around the keys of an answer, against a scripted dialog (a fake fleet
whose screen changes as keys arrive, read by the real Claude Code adapter's keys): an Enter
only into the same dialog with its selection on the wanted option, the options the human saw
compared, a deadline on the whole answer, and who may answer at all."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pytest

from swarm_tui.agents.base import AgentState, Reading
from swarm_tui.agents.registry import adapter_for
from swarm_tui.errors import SwarmError
from swarm_tui.fleet import answer as answer_module
from swarm_tui.fleet.answer import Answers, NotAnswered
from swarm_tui.fleet.identity import Senders
from swarm_tui.fleet.injection import HUMAN

# Claude Code's API key dialog: no numbers, the ❯ on "No (recommended)"; arrows, then Enter
OPTIONS = (("1", "Yes"), ("2", "No (recommended)"))
DIALOG = Reading(AgentState.NEEDS_PERMISSION, None, "Use this API key?", None, OPTIONS, 1)
IDLE = Reading(AgentState.IDLE, "")


@dataclass
class Dialog:
    """A CLI's dialog as keys reach it: Up / Down move the mark (unless `deaf`), Enter
    picks what it is on; `screens` are shown first, one per reading, before the live one."""

    reading: Reading = DIALOG
    deaf: bool = False  # arrows are lost (a key that never arrived, a CLI that ignores it)
    late: int = 0  # readings an arrow's move takes to show
    screens: list[Reading] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    picked: str = ""
    hang: bool = False  # the link takes keys and never answers

    def read(self) -> Reading:
        if self.screens:
            return self.screens.pop(0)
        if self.late:
            self.late -= 1
            return replace(self.reading, cursor=DIALOG.cursor)
        return self.reading

    async def run(self, line: str) -> None:
        if self.hang:
            await asyncio.Event().wait()
        key = line.rsplit(" ", 1)[1]
        self.keys.append(key)
        cursor = self.reading.cursor
        assert cursor is not None
        if key in ("Up", "Down") and not self.deaf:
            cursor = max(0, min(len(OPTIONS) - 1, cursor + (1 if key == "Down" else -1)))
            self.reading = replace(self.reading, cursor=cursor)
        elif key == "Enter" and self.reading.state is AgentState.NEEDS_PERMISSION:
            self.picked = OPTIONS[cursor][1]
            self.reading = IDLE


def answers(dialog: Dialog, monkeypatch: pytest.MonkeyPatch) -> Answers:
    adapter = adapter_for("claude")
    agent = SimpleNamespace(
        name="Ada",
        spec=SimpleNamespace(cli="claude"),
        adapter=adapter,
        pane="%1",
        state=AgentState.NEEDS_PERMISSION,
    )
    fleet = SimpleNamespace(
        resolve=lambda names: [agent],
        reachable=lambda a: True,
        control_for=lambda a: dialog,
        screens=SimpleNamespace(mark=lambda a: None),
    )

    async def read(self: Answers, a: Any) -> Reading:
        return dialog.read()

    monkeypatch.setattr(Answers, "_read", read)
    monkeypatch.setattr(answer_module, "POLL", 0.01)
    monkeypatch.setattr(answer_module, "CURSOR_WAIT", 0.3)
    monkeypatch.setattr(answer_module, "ANSWER_WAIT", 0.5)
    return Answers(fleet)  # type: ignore[arg-type]


async def answer(a: Answers, choice: str, **kw: Any) -> dict[str, Any]:
    # a deadline of the test's own: an answer that hangs fails here, it does not hang pytest
    return await asyncio.wait_for(a.answer("Ada", choice, DIALOG.question, **kw), 5)


async def test_the_arrows_then_enter_pick_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    dialog = Dialog(late=3)  # the CLI redraws the mark a few readings after the arrow
    reply = await answer(answers(dialog, monkeypatch), "yes")
    assert dialog.keys == ["Up", "Enter"] and dialog.picked == "Yes"
    assert reply["option"] == "1. Yes"


async def test_no_enter_unless_the_selection_is_on_the_wanted_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialog = Dialog(deaf=True)  # the Up never moved the mark: Enter would pick "No"
    with pytest.raises(
        NotAnswered,
        match=r"^Ada \(claude\): its selection is on 2\. No \(recommended\), not on 1\. Yes "
        r"\(after Up\); Enter was not pressed: attach to answer it$",
    ):
        await answer(answers(dialog, monkeypatch), "yes")
    assert dialog.keys == ["Up"] and dialog.picked == ""


async def test_a_single_enter_goes_only_into_the_dialog_read_right_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`n` here is Enter alone (the mark is on No already). The dialog read first is gone
    by the time the Enter would go: no Enter into whatever is there now."""
    other = replace(DIALOG, question="Trust this folder?")
    dialog = Dialog(screens=[DIALOG, other], reading=other)
    with pytest.raises(
        NotAnswered,
        match=r"closed or changed while it was being answered "
        r"\(nothing was typed\); the rest was not typed",
    ):
        await answer(answers(dialog, monkeypatch), "no")
    assert dialog.keys == []
    dialog = Dialog(screens=[DIALOG, IDLE], reading=IDLE)  # or no dialog at all
    with pytest.raises(NotAnswered, match="closed or changed"):
        await answer(answers(dialog, monkeypatch), "no")
    assert dialog.keys == []
    dialog = Dialog()  # and the same dialog takes it
    assert (await answer(answers(dialog, monkeypatch), "no"))["keys"] == ["Enter"]
    assert dialog.picked == "No (recommended)"


async def test_the_options_the_human_saw_must_be_the_dialogs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialog = Dialog()
    a = answers(dialog, monkeypatch)
    with pytest.raises(
        NotAnswered,
        match=r"dialog changed: its options are now 1\. Yes / 2\. "
        r"No \(recommended\); nothing was typed",
    ):
        await answer(a, "yes", options=[("1", "Yes"), ("2", "No")])
    assert dialog.keys == []
    reply = await answer(a, "yes", options=[list(o) for o in OPTIONS])  # as JSON brings them
    assert reply["option"] == "1. Yes" and dialog.picked == "Yes"


async def test_a_hung_link_ends_the_answer_at_its_deadline_and_frees_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialog = Dialog(hang=True)
    a = answers(dialog, monkeypatch)
    monkeypatch.setattr(answer_module, "ANSWER_DEADLINE", 0.3)
    with pytest.raises(
        NotAnswered,
        match=r"^Ada \(claude\): no answer within 0 s \(its host's "
        r"link is slow or hung\); nothing was typed; attach to look$",
    ):
        await answer(a, "yes")
    dialog.hang = False  # the link is back: the next answer is not stuck behind the lock
    assert (await answer(a, "yes"))["option"] == "1. Yes"


async def test_an_answer_needs_a_sender_the_kernel_and_the_panes_can_tell() -> None:
    panes: dict[str, str] | None = None  # the local tmux server's link is down

    async def local_panes() -> dict[str, str] | None:
        return panes

    senders = Senders({}, lambda token: None, local_panes)
    with pytest.raises(SwarmError, match="the local tmux server's panes cannot be listed"):
        await senders.sender_for(None, 4242, proven=True)
    with pytest.raises(SwarmError, match="the kernel did not name the process"):
        await senders.sender_for(None, None, proven=True)
    assert await senders.sender_for(None, 4242) == HUMAN  # elsewhere: as before
    panes = {}
    assert await senders.sender_for(None, 4242, proven=True) == HUMAN
