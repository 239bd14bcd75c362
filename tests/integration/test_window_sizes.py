"""Agents' windows take their tiles' sizes, as tmux's own tiled layout does: a view says how
big each tile is, the engine resizes that agent's tmux window (the CLI lays its screen out
for the room it has); an agent no view shows goes back to the default size; a human attached
to a window gets their own terminal's size until they detach."""

from __future__ import annotations

import asyncio
import shlex
import subprocess

import pytest

from swarm_tui import paths
from swarm_tui.fleet import sizes
from swarm_tui.fleet.server import tile_sizes
from swarm_tui.protocol.client import FleetClient, NullViewListener
from swarm_tui.testing import async_wait_until, mock_agent
from swarm_tui.testing.sandbox import TmuxServer

pytestmark = pytest.mark.integration


def test_a_watchers_sizes_are_checked() -> None:
    assert tile_sizes({"Ada": [58, 21], "Bo": [0, 5], "Cy": [9999, 5], "Di": "x"}) == {
        "Ada": (58, 21)
    }
    assert tile_sizes(None) is None  # none said: the sizes it said before stay


async def test_windows_follow_their_tiles_and_a_human_wins(
    sandbox, start_fleet, monkeypatch
) -> None:
    # a window handed to a human waits this long for them to show up; once they did, their
    # leaving gives it back to its tile at once, not when the wait ends
    monkeypatch.setattr(sizes, "GRACE", 600.0)
    run = await start_fleet(
        sandbox.layout("sizes", mock_agent("Ada"), mock_agent("Bo")), visible=False
    )
    run.fleet.listener = run.server.watchers
    await run.wait_states("idle")
    fleet = sandbox.tmux("sizes")
    assert fleet.window_size("Ada") == "120x40" and fleet.window_size("Bo") == "120x40"
    view = FleetClient(paths.socket_path("sizes"), NullViewListener())
    await view.connect(visible=["Ada"])
    try:
        view.set_visible(["Ada"], {"Ada": (58, 21)})
        await async_wait_until(
            lambda: fleet.window_size("Ada") == "58x21",
            10,
            "Ada's window at its tile's size",
            lambda: fleet.window_size("Ada"),
        )
        # the CLI drew for that room: its screen is 58 columns wide now
        await async_wait_until(
            lambda: max(map(len, fleet.capture("Ada").splitlines())) <= 58,
            10,
            "Ada's screen laid out in 58 columns",
        )
        assert fleet.window_size("Bo") == "120x40"  # shown nowhere: the default
        # a human attaches to Ada in a terminal of their own (100x30): theirs wins
        term = TmuxServer(f"term-sizes-{sandbox.home.name}", sandbox.env)
        sandbox._servers.append(term)
        argv = run.fleet.attach_argv("Ada")
        await asyncio.sleep(0.5)  # the view suspends itself, then runs tmux
        subprocess.run(
            [
                "tmux",
                "-L",
                term.socket_name,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "100",
                "-y",
                "30",
                "env -u TMUX " + shlex.join(argv) + "; sleep 3600",
            ],
            env=sandbox.env,
            check=True,
            timeout=10,
        )
        await async_wait_until(
            lambda: fleet.window_size("Ada") == "100x29",
            10,
            "Ada's window at the human's terminal size (less tmux's status line)",
            lambda: fleet.window_size("Ada"),
        )
        await asyncio.sleep(4)  # a while: the sizer leaves it to the human
        assert fleet.window_size("Ada") == "100x29"
        term.run("resize-window", "-t", "t", "-x", "90", "-y", "33")  # they resize theirs
        await async_wait_until(
            lambda: fleet.window_size("Ada") == "90x32",
            10,
            "Ada's window following the human's terminal",
            lambda: fleet.window_size("Ada"),
        )
        term.run("kill-server")  # the human's terminal goes: the tile's size again
        await async_wait_until(
            lambda: fleet.window_size("Ada") == "58x21",
            10,
            "Ada's window back at its tile's size",
            lambda: fleet.window_size("Ada"),
        )
        # another page; Bo's tile is smaller than its CLI is read right in: the smallest
        # window it is (the tile shows the bottom-left of it)
        view.set_visible(["Bo"], {"Bo": (30, 9)})
        both = lambda: (fleet.window_size("Ada"), fleet.window_size("Bo"))  # noqa: E731
        await async_wait_until(
            lambda: both() == ("120x40", "44x16"),
            10,
            "Ada back to the default, Bo at its smallest",
            lambda: both(),
        )
        # a human who attaches with tmux itself (not through swarm) is found by looking
        window = fleet.agent_windows()["Bo"].window
        ada_window = fleet.agent_windows()["Ada"].window
        plain = [
            "tmux",
            "-L",
            fleet.socket_name,
            "select-window",
            "-t",
            window,
            ";",
            "attach-session",
            "-t",
            "=sizes",
        ]
        subprocess.run(
            [
                "tmux",
                "-L",
                term.socket_name,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "u",
                "-x",
                "96",
                "-y",
                "28",
                "env -u TMUX " + shlex.join(plain) + "; sleep 3600",
            ],
            env=sandbox.env,
            check=True,
            timeout=10,
        )
        await async_wait_until(
            lambda: fleet.window_size("Bo") == "96x27",
            10,
            "Bo's window at that human's size",
            lambda: fleet.window_size("Bo"),
        )
        # they go to Ada's window: tmux says so, Ada's is theirs and Bo's its tile's again
        # (well before the sizer's backstop look: RECHECK is far longer than this wait)
        assert sizes.RECHECK > 20
        subprocess.run(
            ["tmux", "-L", fleet.socket_name, "select-window", "-t", ada_window],
            env=sandbox.env,
            check=True,
            timeout=10,
        )
        await async_wait_until(
            lambda: both() == ("96x27", "44x16"),
            10,
            "Ada's window at the human's size, Bo's at its tile's",
            lambda: both(),
        )
    finally:
        await view.close()
