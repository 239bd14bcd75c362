"""Live reload: editing the running layout file changes the fleet in place."""

from __future__ import annotations

import asyncio

import pytest

from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.notices import Notices as Notes

pytestmark = pytest.mark.integration


async def test_edits_add_remove_change_and_bad_edits_keep_the_last_good(sandbox, start_fleet):
    ada, bo, cy = (
        mock_agent("Ada", focus="parser"),
        mock_agent("Bo", focus="lexer"),
        mock_agent("Cy", focus="docs"),
    )
    path = sandbox.layout("live", ada, bo, cy)
    run = await start_fleet(path)
    notes = Notes()
    run.fleet.listener = notes
    run.fleet.watch()
    await run.wait_states("idle")
    server = sandbox.tmux("live")
    panes = {n: server.pane(n) for n in ("Ada", "Bo", "Cy")}

    # change Ada's focus, remove Cy, add Dee, restart Bo with new args: one save
    sandbox.layout(
        "live",
        mock_agent("Ada", focus="parser v2"),
        mock_agent("Bo", "--model", "mock-2", focus="lexer"),
        mock_agent("Dee", focus="tests", prompt="hello Dee"),
    )
    await async_wait_until(
        lambda: list(run.fleet.agents) == ["Ada", "Bo", "Dee"],
        15,
        "the new agent list",
        run.screens,
    )
    await async_wait_until(
        lambda: sandbox.received("Dee") == ["hello Dee"],
        20,
        "Dee to start and get its prompt",
        run.screens,
    )
    assert run.fleet.agents["Ada"].focus == "parser v2"
    assert server.pane("Ada") == panes["Ada"]  # untouched agents keep their panes
    assert "Cy" in server.agent_windows()  # removed from the fleet, window kept, detached
    await async_wait_until(
        lambda: "mock-2" in "\n".join(run.fleet.agents["Bo"].screen),
        20,
        "Bo restarted with its new args",
        run.screens,
    )
    assert any("Cy left the layout" in n for n in notes.lines)

    # an invalid edit: reported with file and field; the last good layout stays
    path.write_text(path.read_text().replace('name = "Ada"', 'name = "Ada"\nbogus = 1', 1))
    await async_wait_until(
        lambda: any("not applied" in n for n in notes.lines),
        15,
        "the invalid edit to be reported",
        run.screens,
    )
    bad = next(n for n in notes.lines if "not applied" in n)
    assert f"{path}:5: agent 'Ada': bogus: unknown field" in bad
    assert list(run.fleet.agents) == ["Ada", "Bo", "Dee"]


async def test_an_agent_that_leaves_and_comes_back_gets_its_messages(sandbox, start_fleet):
    """Live reload removes Cy, then brings it back: the same window, a live queue (the old
    one is stopped), and what was queued for it meanwhile is typed once."""
    from swarm_tui.config.layout import load_layout
    from swarm_tui.fleet.reload import apply_layout

    ada, cy = mock_agent("Ada"), mock_agent("Cy", prompt="hello Cy")
    path = sandbox.layout("back", ada, cy)
    run = await start_fleet(path)
    await run.wait_states("idle")
    pane = sandbox.tmux("back").pane("Cy")
    await apply_layout(run.fleet, load_layout(sandbox.layout("back", ada)))
    assert list(run.fleet.agents) == ["Ada"]
    await apply_layout(run.fleet, load_layout(sandbox.layout("back", ada, cy)))
    assert sandbox.tmux("back").pane("Cy") == pane  # its old window, not a second one
    assert len([w for w in sandbox.tmux("back").windows() if w.agent == "Cy"]) == 1
    await run.wait_states("idle", ["Cy"], timeout=15)
    (message,) = run.fleet.send(["Cy"], "welcome back")
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered",
        20,
        "the message to reach the re-added agent",
        run.screens,
    )
    assert sandbox.received("Cy").count("welcome back") == 1
    assert sandbox.received("Cy").count("hello Cy") == 1, run.store.messages()  # once


async def test_an_edit_that_cannot_be_applied_changes_nothing(sandbox, start_fleet):
    """Removing Bo and moving Ada to another host in one save: the move is refused, so Bo
    stays too (no half-applied layout)."""
    from swarm_tui.config.layout import load_layout
    from swarm_tui.errors import ConfigError
    from swarm_tui.fleet.reload import apply_layout

    path = sandbox.layout("tx", mock_agent("Ada"), mock_agent("Bo"))
    run = await start_fleet(path)
    await run.wait_states("idle")
    windows = len(sandbox.tmux("tx").windows())
    bad = sandbox.layout(
        "tx",
        mock_agent("Ada", host="node1"),
        mock_agent("Cy"),
        hosts={"node1": {"ssh": "node1.example"}},
    )
    with pytest.raises(ConfigError, match="needs a restart"):
        await apply_layout(run.fleet, load_layout(bad))
    assert list(run.fleet.agents) == ["Ada", "Bo"]
    assert len(sandbox.tmux("tx").windows()) == windows  # no window was made for Cy


async def test_an_agent_removed_while_its_message_is_typed_and_back_gets_it_once(
    sandbox, start_fleet, monkeypatch
):
    """Removed by a live reload just as its queue began typing a message, and added back at
    once: the old queue finishes that message, the new one waits for it and does not type
    it again (it was typed twice: seen in CI, where the race comes up under load). The old
    queue is held at its first look at the screen, so the race happens every time."""
    from swarm_tui.config.layout import load_layout
    from swarm_tui.fleet.reload import apply_layout

    ada, cy = mock_agent("Ada"), mock_agent("Cy")
    path = sandbox.layout("race", ada, cy)
    run = await start_fleet(path)
    await run.wait_states("idle")
    injector = run.fleet._injector  # noqa: SLF001 - the race is set up inside the queue
    old_cy = run.fleet.agents["Cy"]
    capture = injector._capture  # noqa: SLF001
    gate, held = asyncio.Event(), asyncio.Event()

    async def slow_first_look(agent):
        if agent is old_cy and not gate.is_set():
            held.set()
            await gate.wait()
        return await capture(agent)

    monkeypatch.setattr(injector, "_capture", slow_first_look)
    (message,) = run.fleet.send(["Cy"], "typed during the reload")
    await async_wait_until(held.is_set, 10, "the old queue to begin typing")
    await apply_layout(run.fleet, load_layout(sandbox.layout("race", ada)))
    await apply_layout(run.fleet, load_layout(sandbox.layout("race", ada, cy)))
    assert run.fleet.agents["Cy"] is not old_cy
    gate.set()
    await async_wait_until(
        lambda: run.store.message(message.id).status == "delivered",
        20,
        "the message delivered",
        run.screens,
    )
    await run.wait_states("idle", ["Cy"], timeout=15)
    (after,) = run.fleet.send(["Cy"], "and the next")
    await async_wait_until(
        lambda: run.store.message(after.id).status == "delivered",
        20,
        "the next message delivered",
        run.screens,
    )
    assert sandbox.received("Cy") == ["typed during the reload", "and the next"]
