"""An invalid edit of the running layout stays on screen until a valid edit is applied."""

from __future__ import annotations

from swarm_tui.ui.app import SwarmApp
from tests.ui.conftest import Live, text_of, until


async def test_invalid_layout_edit_stays_on_screen_until_a_valid_one(live: Live) -> None:
    path = live.fleet.loaded.path
    good = path.read_text()
    live.fleet.watch()
    app = SwarmApp(live.client)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "not applied" not in text_of(app.screen)
        # two problems: an unknown CLI and a duplicate name
        bad = (
            good.replace('cli = "mock"', 'cli = "nosuch"', 1)
            + good[
                good.index("[[agents]]") : good.index("[[agents]]", good.index("[[agents]]") + 1)
            ]
        )
        path.write_text(bad)
        await until(
            lambda: "ui.toml: not applied" in text_of(app.screen),
            timeout=15,
            what="the note of the invalid edit",
        )
        app.clear_notifications()  # the toast times out; the note must not
        await pilot.pause()
        line = next(ln for ln in text_of(app.screen).splitlines() if "not applied" in ln)
        assert "⚠ layout ui.toml: not applied: line 3: defaults.cli: " in line
        assert line.rstrip().endswith(" (+1 more)")
        assert str(path.parent) not in line  # the file is named, not its whole path
        # a valid edit is applied and the note goes
        path.write_text(good.replace('focus = "focus of Gauss"', 'focus = "new focus"'))
        await until(
            lambda: live.fleet.agents["Gauss"].focus == "new focus",
            timeout=15,
            what="the valid edit applied",
        )
        await until(lambda: "not applied" not in text_of(app.screen), what="the note gone")
