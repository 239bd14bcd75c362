"""Answering a permission dialog from a view, end to end: the engine's socket, a real tmux,
the mock agent's own dialog. What the mock read from its terminal (its raw log) proves what
was typed, and that nothing was typed when the answer is refused."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from swarm_tui.agents.base import AgentState
from swarm_tui.errors import SwarmError
from swarm_tui.fleet.answer import Answers
from swarm_tui.protocol.client import FleetClient, Refused
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration

# every turn asks before it runs a command; the turn is long enough to be asked in
ASKING = ("--permission-rate", "1", "--work", "2")


async def asking_fleet(sandbox: Any, start_fleet: Any) -> tuple[Any, FleetClient]:
    """Ada (asking now, its dialog read) and Bo (idle), and a view's client."""
    layout = sandbox.layout("answers", mock_agent("Ada", *ASKING), mock_agent("Bo"))
    run = await start_fleet(layout)
    await run.wait_states("idle")
    run.fleet.send(["Ada"], "build it")
    await run.wait_states("needs-permission", ["Ada"], timeout=10)
    ada = run.fleet.agents["Ada"]
    await async_wait_until(lambda: ada.summary()["options"], 5, "Ada's options", run.screens)
    return run, FleetClient(sandbox.socket_path("answers"))


def screen(run: Any, name: str = "Ada") -> str:
    return "\n".join(run.fleet.agents[name].plain_screen())


async def test_yes_answers_the_dialog_with_the_mocks_own_key(sandbox, start_fleet) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    ada = run.fleet.agents["Ada"]
    question = ada.summary()["question"]
    assert question.startswith("run `")
    assert ada.summary()["options"] == [
        ["1", "Yes"],
        ["2", "No, and tell the agent what to do differently (esc)"],
    ]
    typed = len(sandbox.raw_received("Ada"))
    reply = await client.answer("Ada", "yes", question)
    assert reply["option"] == "1. Yes"
    assert reply["keys"] == ["1"]
    assert reply["state"] != "needs-permission"
    assert sandbox.raw_received("Ada")[typed:] == b"1"
    assert f"⎿ Allowed: {question}" in screen(run)
    await run.wait_states("idle", ["Ada"], timeout=10)
    assert sandbox.received("Ada") == ["build it"]  # the answer never became a message


async def test_no_and_an_options_number_pick_that_option(sandbox, start_fleet) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    question = run.fleet.agents["Ada"].summary()["question"]
    reply = await client.answer("Ada", "no", question)
    assert reply["option"].startswith("2. No")
    assert f"⎿ Denied: {question}" in screen(run)
    await run.wait_states("idle", ["Ada"], timeout=10)
    run.fleet.send(["Ada"], "try again")
    await run.wait_states("needs-permission", ["Ada"], timeout=10)
    await async_wait_until(
        lambda: run.fleet.agents["Ada"].summary()["options"],
        5,
        "the new dialog's options",
        run.screens,
    )
    reply = await client.answer("Ada", "2")
    assert reply["option"].startswith("2. No")
    assert screen(run).count("⎿ Denied:") == 2


async def test_a_dialog_that_went_before_the_answer_is_refused_and_nothing_typed(
    sandbox, start_fleet
) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    ada = run.fleet.agents["Ada"]
    question = ada.summary()["question"]
    sandbox.tmux("answers").send_keys("Ada", "1")  # answered in an attached terminal
    await run.wait_states("idle", ["Ada"], timeout=10)
    typed = sandbox.raw_received("Ada")
    with pytest.raises(
        Refused,
        match=r"Ada \(mock\) is not asking anything now .*nothing "
        r"was typed",
    ):
        await client.answer("Ada", "yes", question)
    assert sandbox.raw_received("Ada") == typed
    assert ada.tracker.reading.draft == ""


async def test_a_dialog_that_closes_as_the_key_is_sent_has_the_key_taken_back(
    sandbox, start_fleet, monkeypatch
) -> None:
    """The race no check can close: the screen showed the dialog, and it went in the instant
    before the key arrived. The `1` lands in the input box; it is deleted again, and the
    answer is refused."""
    run, _ = await asking_fleet(sandbox, start_fleet)
    ada = run.fleet.agents["Ada"]
    stale = ada.adapter.read(ada.plain_screen())  # the dialog, as read just before
    sandbox.tmux("answers").send_keys("Ada", "1")
    await run.wait_states("idle", ["Ada"], timeout=10)
    real_read = Answers._read
    reads = 0

    async def first_read_is_stale(self: Answers, agent: Any) -> Any:
        nonlocal reads
        reads += 1
        return stale if reads == 1 else await real_read(self, agent)

    monkeypatch.setattr(Answers, "_read", first_read_is_stale)
    typed = len(sandbox.raw_received("Ada"))
    with pytest.raises(
        Exception, match="closed before the answer reached it: the stray '1' was taken back"
    ):
        await run.server.answers.answer("Ada", "yes", stale.question)
    # the key, then Backspace (the mock logs what it reads in its own time)
    await async_wait_until(
        lambda: sandbox.raw_received("Ada")[typed:] == b"1\x7f", 5, "the key, then Backspace"
    )
    await async_wait_until(lambda: ada.tracker.reading.draft == "", 5, "an empty box", run.screens)
    assert sandbox.received("Ada") == ["build it"]


async def test_a_different_dialog_is_not_answered(sandbox, start_fleet) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    typed = sandbox.raw_received("Ada")
    with pytest.raises(
        Refused,
        match=r"Ada \(mock\)'s dialog changed: it now asks 'run `.*`'"
        r"; nothing was typed",
    ):
        await client.answer("Ada", "yes", "run `something else`")
    assert sandbox.raw_received("Ada") == typed
    assert run.fleet.agents["Ada"].state is AgentState.NEEDS_PERMISSION


async def test_an_option_the_dialog_does_not_have_is_refused(sandbox, start_fleet) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    typed = sandbox.raw_received("Ada")
    with pytest.raises(
        Refused,
        match=r"mock: no option 3 in this dialog \(it has 1-2\); "
        "attach to answer it",
    ):
        await client.answer("Ada", "3")
    with pytest.raises(Refused, match="bad request"):
        await client.answer("Ada", "maybe")
    with pytest.raises(Refused, match="Bo .* is not asking anything now"):
        await client.answer("Bo", "yes")
    assert sandbox.raw_received("Ada") == typed
    assert run.fleet.agents["Ada"].state is AgentState.NEEDS_PERMISSION


async def test_an_agent_may_not_answer_another_agents_prompt(sandbox, start_fleet) -> None:
    run, client = await asking_fleet(sandbox, start_fleet)
    typed = sandbox.raw_received("Ada")
    bo = run.fleet.agents["Bo"]
    with pytest.raises(Refused, match="Bo may not answer Ada's prompt: only a human answers"):
        await client.request({"op": "answer", "agent": "Ada", "choice": "yes", "token": bo.token})
    ada = run.fleet.agents["Ada"]
    with pytest.raises(Refused, match="Ada may not answer Ada's prompt"):
        await client.request({"op": "answer", "agent": "Ada", "choice": "yes", "token": ada.token})
    assert sandbox.raw_received("Ada") == typed
    assert ada.state is AgentState.NEEDS_PERMISSION


async def test_the_wait_counts_from_when_the_dialog_came_and_a_new_question_is_told(
    sandbox, start_fleet, monkeypatch
) -> None:
    """`state_since` holds while the agent waits (its screen redraws all the while), so a
    view's "needs-permission 4m" counts up; a dialog that follows another with the state
    unchanged still reaches the views."""
    run, _ = await asking_fleet(sandbox, start_fleet)
    ada = run.fleet.agents["Ada"]
    since = ada.summary()["state_since"]
    captured = ada.last_capture
    # the mock redraws its dialog every 0.25 s: wait for two more readings of it
    await async_wait_until(lambda: ada.last_capture > captured, 5, "a new reading")
    captured = ada.last_capture
    await async_wait_until(lambda: ada.last_capture > captured, 5, "another reading")
    assert ada.state is AgentState.NEEDS_PERMISSION
    assert abs(ada.summary()["state_since"] - since) < 0.05
    told: list[str] = []
    monkeypatch.setattr(
        run.fleet.listener, "agent_changed", lambda agent: told.append(agent.summary()["question"])
    )
    other = ada.tracker.reading.__class__(
        AgentState.NEEDS_PERMISSION, None, "run `rm -rf build/`", None, (("1", "Yes"),)
    )
    ada.tracker.screen(other)
    run.fleet._evaluate(time.monotonic(), [ada])
    assert told == ["run `rm -rf build/`"]
    run.fleet._evaluate(time.monotonic(), [ada])
    assert told == ["run `rm -rf build/`"]  # told once, not at every reading


async def test_a_dialog_with_other_options_than_the_human_saw_is_not_answered(
    sandbox, start_fleet
) -> None:
    """The same question with other options is another dialog (an agent that asks again
    about the same command, a CLI that changed its offer)."""
    run, client = await asking_fleet(sandbox, start_fleet)
    ada = run.fleet.agents["Ada"]
    question = ada.summary()["question"]
    typed = sandbox.raw_received("Ada")
    with pytest.raises(
        Refused,
        match=r"Ada \(mock\)'s dialog changed: its options are now 1\. Yes / 2\. No, and tell "
        r"the agent what to do differently \(esc\); nothing was typed",
    ):
        await client.answer("Ada", "yes", question, [("1", "Yes"), ("2", "No")])
    assert sandbox.raw_received("Ada") == typed
    options = [tuple(o) for o in ada.summary()["options"]]
    reply = await client.answer("Ada", "yes", question, options)  # what it shows: answered
    assert reply["option"] == "1. Yes"


async def test_no_answer_when_the_local_panes_cannot_say_who_asks(
    sandbox, start_fleet, monkeypatch
) -> None:
    """With the local tmux link down, a request without a token cannot be told from one
    made in an agent's pane: an answer is refused, not typed as the human's."""
    run, client = await asking_fleet(sandbox, start_fleet)
    link = run.fleet.links["local"]
    typed = sandbox.raw_received("Ada")
    question = run.fleet.agents["Ada"].summary()["question"]
    monkeypatch.setattr(link, "connected", False)
    with pytest.raises(SwarmError, match="the local tmux server's panes cannot be listed"):
        await run.fleet.sender_for(None, os.getpid(), proven=True)
    assert await run.fleet.sender_for(None, os.getpid()) == "human"  # other requests: as ever
    with pytest.raises(
        Refused,
        match=r"^who sent this cannot be told: the local tmux "
        r"server's panes cannot be listed \(its link is down\); nothing was done",
    ):
        await client.answer("Ada", "yes", question)
    monkeypatch.undo()
    assert sandbox.raw_received("Ada") == typed
    assert await run.fleet.sender_for(None, os.getpid(), proven=True) == "human"


async def test_swarm_answer_from_a_shell(sandbox, start_fleet) -> None:
    """`swarm answer AGENT CHOICE`: one line of what was picked, exit 0; a refusal is one
    line and exit 1, with nothing typed; bad input (an unknown agent, a choice that is no
    answer) exit 2."""
    run, _ = await asking_fleet(sandbox, start_fleet)
    typed = sandbox.raw_received("Ada")
    for argv, why in [
        (("Nobody", "y"), "swarm: answer: no agent named 'Nobody' in this fleet (Ada, Bo)"),
        (
            ("Ada", "maybe"),
            "swarm: answer: 'maybe' is not an answer: give y, n or an option's number 1-9",
        ),
        (("Ada", "0"), "swarm: answer: '0' is not an answer"),
    ]:
        bad = await sandbox.aswarm("answer", *argv)
        assert bad.returncode == 2, bad
        assert bad.stderr.strip().startswith(why) and bad.stderr.count("\n") == 1, bad.stderr
    refused = await sandbox.aswarm("answer", "Ada", "3")
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        "swarm: mock: no option 3 in this dialog (it has 1-2); attach to answer it\n"
    )
    idle = await sandbox.aswarm("answer", "bo", "y")
    assert idle.returncode == 1
    assert idle.stderr.startswith("swarm: Bo (mock) is not asking anything now")
    assert sandbox.raw_received("Ada") == typed  # nothing typed by any of them
    done = await sandbox.aswarm("answer", "ada", "y")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Ada: answered 1. Yes\n"
    assert sandbox.raw_received("Ada")[len(typed) :] == b"1"
    await run.wait_states("idle", ["Ada"], timeout=10)
