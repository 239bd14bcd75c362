"""The fleet view: a sidebar of named agents and a grid of live tiles, driven by keys.

The app composes widgets, binds keys to actions and draws what the engine reports, in
batches on one timer. Every action is also a command in the palette (ctrl+p).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult, SystemCommand
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Label

from swarm_tui.protocol.client import FleetClient, FleetView
from swarm_tui.protocol.models import SkillView
from swarm_tui.ui.alerts import Alerts
from swarm_tui.ui.asking import asking
from swarm_tui.ui.bridge import LayoutNote, UiBridge
from swarm_tui.ui.command import swarm_command
from swarm_tui.ui.compositor import FleetScreen
from swarm_tui.ui.durations import Clock
from swarm_tui.ui.footer import FleetFooter
from swarm_tui.ui.grid import MAX_PER_PAGE, cells, grid_shape, min_tile_width, sidebar_width
from swarm_tui.ui.help import HelpScreen, fleet_help
from swarm_tui.ui.judge import JudgePane
from swarm_tui.ui.keys import FLEET_KEYS, FOOTER_KEYS, palette_commands
from swarm_tui.ui.messages import MessagesScreen
from swarm_tui.ui.notes import agent_notes
from swarm_tui.ui.prompting import PromptActions
from swarm_tui.ui.reminders import RemindersScreen
from swarm_tui.ui.sidebar import Sidebar
from swarm_tui.ui.status import matches, status_line
from swarm_tui.ui.tiles import AgentTile, Backdrop, BackdropRow, TileGrid

FRAME = 1 / 30  # seconds between batched redraws


class SwarmApp(PromptActions):
    """The fleet view of a connected `FleetClient`: it reads the client's `FleetView`, asks
    the engine for everything it does, and draws what the client hears, in batches."""

    CSS_PATH = Path(__file__).with_name("swarm.tcss")
    TITLE = "swarm"

    BINDINGS = FLEET_KEYS

    def __init__(self, client: FleetClient, start_engine: Callable[[], None] | None = None) -> None:
        """`start_engine` starts the fleet's engine again (blocking: run in a thread); None
        when this view cannot (it watches an engine on another machine)."""
        super().__init__()
        self.start_engine = start_engine
        if client.view is None:
            raise ValueError("SwarmApp needs a connected client (await client.connect())")
        self.client = client
        self.view: FleetView = client.view
        self.bridge = UiBridge()
        client.listener = self.bridge
        self._note_from_view()
        self.order: list[str] = list(self.view.agents)  # the tiles' order (the filter's)
        self.filter = ""
        self.selected = 0
        self.page = 0
        self.marked: set[str] = set()
        self.zoomed = False
        self.cols, self.rows = 1, 1
        self._laid_out = False  # cols and rows not yet measured from the grid
        self._sidebar_choice = True  # hidden with b
        self._status_drawn = ""
        self._retry: Timer | None = None  # reconnecting while the engine is away
        self._connecting = False
        self._asking = asyncio.Lock()  # one request at a time: the engine gets them in order
        self.skills: dict[str, SkillView] = {}  # the engine's, fetched when a prompt opens

    # ------------------------------------------------------------------ layout
    def get_default_screen(self) -> Screen[None]:
        return FleetScreen()

    def compose(self) -> ComposeResult:
        with BackdropRow():
            yield Sidebar(id="sidebar")
            with Backdrop(id="main"):
                with TileGrid(id="grid"):
                    for _ in range(MAX_PER_PAGE):
                        yield AgentTile(self.view)
                yield Label("", id="status")
            yield JudgePane(self.view, id="judge-pane")
        yield Label("", id="layout-note")
        yield Label("", id="engine-note")
        yield FleetFooter(FOOTER_KEYS)

    def on_mount(self) -> None:
        # keep references: while a modal screen is up, app.query() searches that screen
        self._grid = self.query_one("#grid")
        self._tiles = list(self._grid.query(AgentTile))
        self._judge = self.query_one(JudgePane)
        self._sidebar = self.query_one(Sidebar)
        self._footer = self.query_one(FleetFooter)
        self._hide_keys()
        self._place_judge()
        self._status = self.query_one("#status", Label)
        self._layout_note = self.query_one("#layout-note", Label)
        self._layout_note.display = False
        self._engine_note = self.query_one("#engine-note", Label)
        self._engine_note.display = False
        self.sub_title = f"fleet {self.view.fleet}"
        self.run_worker(self._fetch_skills(), group="skills", exclusive=True)
        self.alerts = Alerts(self._to_terminal, lambda: self.view.notify)
        self.alerts.look(self.view)  # an agent already waiting on a prompt rings now, once
        # frames while something changes; asleep (no wake-ups) while nothing does
        self._frame = self.set_interval(FRAME, self._draw_changes)
        self.bridge.wake = self._frame.resume
        self.bridge.on_screen = self._draw_screen
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(self._relayout)

    def _to_terminal(self, text: str) -> None:
        """Raw output for the terminal itself (the bell, a desktop notification)."""
        if not self.is_headless and self._driver is not None:
            self._driver.write(text)

    def on_tile_grid_resized(self) -> None:
        self._relayout()

    def on_agent_tile_resized(self) -> None:
        if self._laid_out:  # the client drops a repeat of what it last said
            self.client.set_visible(self._visible_names(), self._tile_sizes())

    @property
    def per_page(self) -> int:
        return 1 if self.zoomed else self.cols * self.rows

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.order) // self.per_page))

    def _place_sidebar(self) -> None:
        """The sidebar narrows with the terminal (tiles keep their room) and hides with b."""
        self._sidebar.display = self._sidebar_choice
        want = sidebar_width(self.size.width)
        if cells(self._sidebar) != want:
            self._sidebar.styles.width = want

    def _place_judge(self) -> None:
        """Docked beside the grid on a wide terminal, over the grid on a narrow one."""
        side = cells(self._sidebar) if self._sidebar.display else 0
        if self._judge.place(self.size.width, side, self._grid.size.height):
            self.client.set_visible(self._visible_names())
            self.call_after_refresh(self._redraw_tiles)  # the judge's window takes its room

    def _relayout(self) -> None:
        self._place_sidebar()
        self._place_judge()
        grid = self._grid
        width, height = grid.size.width, grid.size.height
        if not width or not height:
            return
        agents = self.view.agents
        narrowest = min_tile_width(agents[n].cli for n in self.order if n in agents)
        self.cols, self.rows = grid_shape(width, height, len(self.order), narrowest)
        self._laid_out = True
        # the page follows the selection: a resize never leaves it on a page past the end
        self.page = 0 if self.zoomed else self.selected // self.per_page
        self._show_page()
        self._draw_layout_note()

    def _page_names(self) -> list[str]:
        if not self.order:
            return []
        if self.zoomed:
            return [self.order[self.selected]]
        start = self.page * self.per_page
        return self.order[start : start + self.per_page]

    def _show_page(self) -> None:
        grid = self._grid
        cols, rows = (1, 1) if self.zoomed else (self.cols, self.rows)
        grid.styles.grid_size_columns = cols
        grid.styles.grid_size_rows = rows
        names = self._page_names()
        for i, tile in enumerate(self._tiles):
            tile.show(names[i] if i < len(names) else None)
        self._draw_states()
        self.client.set_visible(self._visible_names())
        self._draw_sidebar()
        self.call_after_refresh(self._redraw_tiles)

    def _redraw_tiles(self) -> None:
        for tile in self._tiles:
            if tile.name_shown is not None:
                tile.update_screen()
        self.client.set_visible(self._visible_names(), self._tile_sizes())

    def _tile_sizes(self) -> dict[str, tuple[int, int]]:
        """Each shown agent's room (its tile's inside): the engine sizes its window to it."""
        tiles = [t for t in self._tiles if t.name_shown is not None and t.display]
        if self._judge.display:
            tiles += list(self._judge.query(AgentTile))
        return {
            t.name_shown: (t.content_region.width, t.content_region.height)
            for t in tiles
            if t.name_shown and t.content_region.width > 0
        }

    # ------------------------------------------------------------------ drawing
    def _draw_changes(self) -> None:
        b = self.bridge
        if (
            not b.pending()
            and (b.lost is None or self._retry is not None)
            and self.view.ended is None
        ):
            self._frame.pause()  # the bridge's next change resumes it
            return
        ended = b.end or (
            (self.view.ended.reason, self.view.ended.deliberate)
            if self.view.ended is not None
            else None
        )
        if ended is not None:
            self.exit(ended[0])
            return
        if b.lost is not None and self._retry is None:
            self._engine_lost(b.lost)
        if b.screens:
            for name in b.screens:
                for tile in self._tiles:
                    if tile.name_shown == name:
                        tile.update_screen()
            if self._judge.display and self._judge.judge_agent_name() in b.screens:
                self._judge.refresh_pane()
            b.screens.clear()
        for name in b.agents:
            if (agent := self.view.agents.get(name)) is not None:
                self.alerts.agent(agent)
        for name in b.hosts:
            if (host := self.view.hosts.get(name)) is not None:
                self.alerts.host(host)
        if b.agents and self.filter:  # states changed: who passes the filter may too
            words = self.filter.split()
            if [n for n, a in self.view.agents.items() if matches(a, words)] != self.order:
                self._apply_order()
        if b.agents:
            self._hide_keys()
        if b.agents or b.messages:
            b.agents.clear()
            self._draw_states()
            self._draw_sidebar()
        for m in b.messages:
            if m.status in ("failed", "uncertain"):
                self.notify(
                    f"message #{m.id} to {m.recipient}: {m.status} — {m.detail}",
                    severity="error",
                    timeout=10,
                )
        b.messages.clear()
        if b.relayout:
            b.relayout = False
            self._apply_order()
        for text in b.notices:
            self.notify(text, severity="warning", timeout=10)
        b.notices.clear()
        if b.layout_note_changed:
            b.layout_note_changed = False
            self._draw_layout_note()
        if b.hosts:
            b.hosts.clear()
            self._draw_states()
            self._draw_sidebar()
        if b.work:
            b.work = False
            self._place_judge()
            self._draw_sidebar()
            for screen in self.screen_stack:
                if isinstance(screen, RemindersScreen):
                    screen.reload()

    def _draw_screen(self, name: str) -> None:
        """An agent's new screen, into its tile now (the judge pane, with its log, at the
        next frame)."""
        for tile in self._tiles:
            if tile.name_shown == name:
                tile.update_screen()
        if self._judge.display and self._judge.judge_agent_name() == name:
            self.bridge.screens.add(name)
            self.bridge.wake()

    def _hide_keys(self) -> None:
        """The footer leaves out `d` while no agent has a worktree."""
        worktrees = any(a.changes is not None for a in self.view.agents.values())
        self._footer.hide(set() if worktrees else {"diff"})

    def _draw_layout_note(self) -> None:
        note, label = self.bridge.layout_note, self._layout_note
        label.display = note is not None
        if note is not None:
            width = self.size.width
            label.update(Text(note.line(self.view.layout_path, width), no_wrap=True))

    def _note_from_view(self) -> None:
        """The layout note as the engine's snapshot says it (attached, or back)."""
        problems = self.view.layout_problems
        self.bridge.set_layout_note(
            LayoutNote(tuple(p for p in problems if p.strip()), self.view.layout_partly)
            if problems
            else None
        )

    def _draw_states(self) -> None:
        current = self.current_name()
        for tile in self._tiles:
            name = tile.name_shown
            if name is not None:
                host = self.view.host_of(name)
                tile.update_state(
                    marked=name in self.marked,
                    link_down=None if host is None or host.connected else host.since,
                )
                tile.set_class(name == current, "-selected")
                tile.set_class(name in self.marked, "-marked")
        where = (
            f"agent {self.selected + 1}/{len(self.order)}"
            if self.zoomed
            else f"page {self.page + 1}/{self.pages}"
        )
        status = status_line(
            self.view,
            where,
            len(self.marked),
            self.zoomed,
            self._sidebar.colours(),
            (self.filter, len(self.order)) if self.filter else None,
            self._status.size.width or self._grid.size.width,
        )
        if status.plain != self._status_drawn:
            self._status_drawn = status.plain
            self._status.update(status, layout=False)  # one row, always: no new layout

    def _draw_waits(self) -> None:
        """How long an agent has waited on a dialog, or its host's link been down, counts
        up in its tile's title (the sidebar's clock ticks with the sidebar)."""
        if any(
            asking(self.view.agents.get(t.name_shown or "")) or self._link_down(t.name_shown)
            for t in self._tiles
        ):
            self._draw_states()

    def _link_down(self, name: str | None) -> bool:
        host = self.view.host_of(name) if name else None
        return host is not None and not host.connected

    def _visible_names(self) -> set[str]:
        names = set(self._page_names())
        judge = self._judge.judge_agent_name() if self._judge.display else None
        return names | ({judge} if judge else set())

    def _apply_order(self) -> None:
        """The tiles' order: every agent, or those the filter lets through; the selection
        stays on its agent when it can."""
        current = self.current_name()
        words = self.filter.split()
        self.order = [n for n, a in self.view.agents.items() if matches(a, words)]
        self.selected = (
            self.order.index(current)
            if current in self.order
            else min(self.selected, max(0, len(self.order) - 1))
        )
        if current is not None and self.current_name() != current:
            self.moved_by_itself(True)  # y, n and 1-9 ask again before answering it
        self.marked &= set(self.view.agents)
        self._relayout()

    def _tick(self) -> None:
        """Once a second, one wake-up for what moves with time alone: alerts (verdicts,
        trailing bells), the sidebar's clocks, and the waits counting up in tiles."""
        self.alerts.look(self.view)
        self._tick_sidebar()
        self._draw_waits()

    def _tick_sidebar(self) -> None:
        """Once a second: the sidebar again only if one of its clocks moved (or its size or
        theme changed); a fleet at rest costs nothing here most seconds."""
        if self._sidebar.stale(time.time()):
            self._draw_sidebar()
        elif self._judge.display:
            self._judge.refresh_pane()

    def _draw_sidebar(self) -> None:
        view = self.view
        shown = [view.agents[n] for n in self.order if n in view.agents]
        clock = Clock(time.time())
        self._sidebar.show(
            shown,
            self.current_name(),
            self.marked,
            set(self._page_names()),
            view.hosts,
            agent_notes(view, clock),
            view.oldest_open(),
            clock,
        )
        if self._judge.display:
            self._judge.refresh_pane()

    # ------------------------------------------------------------------ selection
    def current_name(self) -> str | None:
        return self.order[self.selected] if self.order else None

    def select(self, index: int) -> None:
        if not self.order:
            return
        self.selected = max(0, min(len(self.order) - 1, index))
        self.moved_by_itself(False)
        page = 0 if self.zoomed else self.selected // self.per_page
        if page != self.page or self.zoomed:
            self.page = page
            self._show_page()
        else:
            self._draw_states()
            self._draw_sidebar()

    def _measure_grid(self) -> None:
        """Moves and pages need the grid's size: a key read before the first layout
        computes it now."""
        if not self._laid_out:
            self._relayout()

    def action_move(self, dx: int, dy: int) -> None:
        self._measure_grid()
        step = dx + dy * (1 if self.zoomed else self.cols)
        self.select(self.selected + step)

    def action_page(self, delta: int) -> None:
        self._measure_grid()
        if self.zoomed:
            self.select(self.selected + delta)
            return
        page = (self.page + delta) % self.pages
        self.select(page * self.per_page)

    def action_zoom(self) -> None:
        self.zoomed = not self.zoomed
        self.page = 0 if self.zoomed else self.selected // self.per_page
        self._show_page()

    def action_mark(self) -> None:
        name = self.current_name()
        if name:
            self.marked ^= {name}
            self._draw_states()
            self._draw_sidebar()

    def select_name(self, name: str) -> None:
        if name in self.order:
            self.select(self.order.index(name))

    def on_sidebar_picked(self, event: Sidebar.Picked) -> None:
        self.select_name(event.name)

    def on_click(self, event: object) -> None:
        widget = getattr(event, "widget", None)
        if isinstance(widget, AgentTile) and widget.name_shown is not None:
            self.select_name(widget.name_shown)

    # ------------------------------------------------------------------ other views
    def action_sidebar(self) -> None:
        self._sidebar_choice = not self._sidebar_choice
        self._relayout()

    def action_judge_pane(self) -> None:
        self._judge.toggle(self.size.width)
        self._place_judge()

    def action_reminders(self) -> None:
        self.push_screen(RemindersScreen(self.client), lambda _: self._draw_sidebar())

    def action_messages(self) -> None:
        self.push_screen(MessagesScreen(self.client))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(fleet_help(self.BINDINGS)))

    def action_show_help_panel(self) -> None:
        """Textual's own "Keys" command shows our help: every key, every screen."""
        self.action_help()

    def action_quit_ui(self) -> None:
        view = self.view
        self.exit(
            f"the engine of fleet {view.fleet!r} keeps running its agents: "
            f"`{swarm_command('ui', view.fleet)}` re-attaches, "
            f"`{swarm_command('down', str(view.layout_path))}` stops them"
        )

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from palette_commands(self, self.BINDINGS)
        for skill in sorted(self.skills.values(), key=lambda s: s.name):
            yield SystemCommand(
                f"Skill: {skill.name}",
                skill.description,
                partial(self.action_prompt, "selection", f"/{skill.name} "),
            )
        for name in self.order:
            yield SystemCommand(
                f"Go to {name}", f"Select agent {name}", partial(self.select_name, name)
            )
