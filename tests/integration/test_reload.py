"""Live reload: editing the running layout file changes the fleet in place."""

from __future__ import annotations

import pytest

from swarm_tui.fleet.events import NullListener
from swarm_tui.testing import async_wait_until, mock_agent

pytestmark = pytest.mark.integration


class Notes(NullListener):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def notice(self, text: str) -> None:
        self.lines.append(text)


async def test_edits_add_remove_change_and_bad_edits_keep_the_last_good(sandbox, start_fleet):
    ada, bo, cy = (mock_agent("Ada", focus="parser"), mock_agent("Bo", focus="lexer"),
                   mock_agent("Cy", focus="docs"))
    path = sandbox.layout("live", ada, bo, cy)
    run = await start_fleet(path)
    notes = Notes()
    run.fleet.listener = notes
    run.fleet.watch()
    await run.wait_states("idle")
    server = sandbox.tmux("live")
    panes = {n: server.pane(n) for n in ("Ada", "Bo", "Cy")}

    # change Ada's focus, remove Cy, add Dee, restart Bo with new args: one save
    sandbox.layout("live", mock_agent("Ada", focus="parser v2"),
                   mock_agent("Bo", "--model", "mock-2", focus="lexer"),
                   mock_agent("Dee", focus="tests", prompt="hello Dee"))
    await async_wait_until(lambda: list(run.fleet.agents) == ["Ada", "Bo", "Dee"], 15,
                           "the new agent list", run.screens)
    await async_wait_until(lambda: sandbox.received("Dee") == ["hello Dee"], 20,
                           "Dee to start and get its prompt", run.screens)
    assert run.fleet.agents["Ada"].focus == "parser v2"
    assert server.pane("Ada") == panes["Ada"]  # untouched agents keep their panes
    assert "Cy" in server.agent_windows()  # removed from the fleet, window kept, detached
    await async_wait_until(lambda: "mock-2" in "\n".join(run.fleet.agents["Bo"].screen), 20,
                           "Bo restarted with its new args", run.screens)
    assert any("Cy left the layout" in n for n in notes.lines)

    # an invalid edit: reported with file and field; the last good layout stays
    path.write_text(path.read_text().replace('name = "Ada"', 'name = "Ada"\nbogus = 1', 1))
    await async_wait_until(lambda: any("not applied" in n for n in notes.lines), 15,
                           "the invalid edit to be reported", run.screens)
    bad = next(n for n in notes.lines if "not applied" in n)
    assert "agents[0].bogus: unknown field" in bad and str(path) in bad
    assert list(run.fleet.agents) == ["Ada", "Bo", "Dee"]
