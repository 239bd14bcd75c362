"""A tmux server that stops answering: the fleet says so, waits for it, and loses nothing.

A node under memory pressure, a job that Slurm suspends (it stops every process of the job,
the tmux server started by its step too), a server blocked on a stuck client: the control
channel stays open and tmux simply does not answer. Every command the engine sends would
wait forever, and the read loop, which waits for a round of captures, with it. Here the
fleet's real tmux server is frozen with the cgroup freezer (its agents keep running):

- within the answer deadline the host's agents show `unreachable`, and `swarm ls` answers
  meanwhile (the engine is not stuck behind tmux);
- a message sent while the server is frozen is not typed, not called `uncertain` (nothing
  was typed), and is delivered once the server answers again;
- the reconnection's own tmux commands have a deadline too: the link says why it is not back
  yet and tries again, and comes back by itself when tmux answers.
"""

from __future__ import annotations

import json

import pytest

from swarm_tui.hosts import local
from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.freezer import frozen
from swarm_tui.tmux import client

pytestmark = pytest.mark.integration

ANSWER_WITHIN = 3.0  # seconds: the engine's deadline for tmux's answers, shortened here
RUN_WITHIN = 2.0  # seconds: and for a one-off tmux command


async def test_a_tmux_server_that_stops_answering(sandbox, start_fleet, monkeypatch):
    monkeypatch.setattr(client, "ANSWER_WITHIN", ANSWER_WITHIN)
    monkeypatch.setattr(local, "RUN_WITHIN", RUN_WITHIN)
    run = await start_fleet(sandbox.layout("hang", mock_agent("A0"), mock_agent("A1")))
    await run.wait_states("idle", timeout=30)
    tmux = sandbox.tmux("hang")
    server = int(tmux.run("display-message", "-p", "#{pid}").stdout)
    store = run.store

    with frozen(server):
        (message,) = run.fleet.send(["A0"], "sent while tmux hung")
        await run.wait_states("unreachable", timeout=ANSWER_WITHIN + 10)
        listing = await sandbox.aswarm("ls", "--json", timeout=10)
        assert listing.returncode == 0, listing.stderr
        assert {a["name"]: a["state"] for a in json.loads(listing.stdout)} == {
            "A0": "unreachable",
            "A1": "unreachable",
        }
        assert store.message(message.id).status == "queued", store.message(message.id)
        link = run.fleet.link_of(run.fleet.agents["A0"])
        await async_wait_until(
            lambda: link.detail == "tmux did not answer `has-session` in 2 s",
            10,
            "the reconnection to say why it waits",
            lambda: link.detail,
        )

    await run.wait_states("idle", timeout=30)
    await async_wait_until(
        lambda: store.message(message.id).status == "delivered",
        30,
        "the message to be delivered once tmux answers",
        lambda: f"{store.message(message.id)}\n{run.screens()}",
    )
    assert sandbox.received("A0") == ["sent while tmux hung"]
    assert sandbox.received("A1") == []
