"""The sidebar: every agent, its state, quiet time and its one focus label (and, for an
agent with a worktree, the size of its change and whether it conflicts with its base); on a
cluster, grouped by node, each node with its link state and its GPUs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from rich.text import Span, Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from swarm_tui.client import SINCE_STATE
from swarm_tui.protocol.models import AgentView, ChangeView, HostView
from swarm_tui.ui.asking import asking, sidebar_note
from swarm_tui.ui.durations import Clock
from swarm_tui.ui.fit import clip
from swarm_tui.ui.tiles import CONSOLE, SHORT_STATES, STATE_MARKS, state_styles

BARS = " ▁▂▃▄▅▆▇█"
MIN_NAME = 8  # columns of an agent's name the sidebar keeps before dropping the state word
# (and of its focus label before the change's size takes a shorter form)


FULL, SHORT, NONE = 0, 1, 2  # the state's word: whole, short (`needs you`), left out


def right_part(agent: AgentView, clock: Clock, oldest: float | None, words: int) -> str:
    """The row's right side: queued messages, the state's word, and how long it has been
    in that state (waiting on a prompt, unreachable, idle, exited), or, working, how long
    its screen has been quiet."""
    queue = ""
    if agent.queued:
        queue = f"✉{agent.queued}" + (f" {clock.since(oldest)}" if oldest is not None else "")
    waited = agent.state_since if agent.state in SINCE_STATE else agent.last_output
    quiet = clock.since(waited) if waited is not None else ""
    word = (agent.state, SHORT_STATES.get(agent.state, agent.state), "")[words]
    return " ".join(p for p in (queue, word, quiet) if p)


def state_words(
    agents: Sequence[AgentView], width: int, clock: Clock, oldest: dict[str, float]
) -> int:
    """How every row says its state (FULL, SHORT or NONE): the longest way that leaves
    each name its room, the same on every row (the mark and colour say it too)."""
    for words in (FULL, SHORT):
        if all(
            len(right_part(a, clock, oldest.get(a.name), words)) + 4 + MIN_NAME <= width
            for a in agents
        ):
            return words
    return NONE


def _count(n: int) -> str:
    return str(n) if n < 10_000 else f"{n // 1000}k"


def change_parts(change: ChangeView | None) -> list[tuple[str, str]]:
    """An agent's change, compactly, as (text, role) pieces: `+120` added, `−14` deleted,
    `5f` files, `⚠ conflict`; none for no worktree or nothing changed."""
    if change is None or not (change.added or change.deleted or change.files or change.conflicts):
        return []
    parts = [(f"+{_count(change.added)}", "added")] if change.added else []
    parts += [(f"−{_count(change.deleted)}", "deleted")] if change.deleted else []
    parts += [(f"{_count(change.files)}f", "files")] if change.files else []
    if change.conflicts:
        parts.append(("⚠ conflict", "conflict"))
    return parts


def change_fitted(parts: list[tuple[str, str]], room: int) -> list[tuple[str, str]]:
    """The longest form of the change that fits in `room` cells: all of it; the conflict
    as its mark alone (`⚠`, as the help says); without the files' count; the files'
    count alone; the mark alone. A count is never cut, and never a sign without its
    number."""

    def cells(ps: list[tuple[str, str]]) -> int:
        return sum(len(t) for t, _ in ps) + max(0, len(ps) - 1)

    marked = [("⚠", r) if r == "conflict" else (t, r) for t, r in parts]
    tries = [
        parts,
        marked,
        [p for p in marked if p[1] != "files"],
        [p for p in marked if p[1] in ("files", "conflict")],
        [p for p in marked if p[1] == "conflict"],
    ]
    return next((t for t in tries if t and cells(t) <= room), [])


class Gpu(Protocol):
    """One GPU's telemetry (the protocol's GpuView, or the host link's own reading)."""

    @property
    def util(self) -> int: ...

    @property
    def mem_used(self) -> int: ...

    @property
    def mem_total(self) -> int: ...


def _bar(fraction: float) -> str:
    return BARS[max(0, min(8, round(fraction * 8)))]


def gpu_summary(gpus: Sequence[Gpu]) -> str:
    """One bar per GPU (utilisation; `?` where the GPU does not say, as MIG partitions
    do not), then mean utilisation and memory used / total of the GPUs that say."""
    if not gpus:
        return ""
    bars = "".join(_bar(g.util / 100) if g.util >= 0 else "?" for g in gpus)
    known = [g.util for g in gpus if g.util >= 0]
    util = f"{sum(known) // len(known)}%" if known else "?%"
    mem = [g for g in gpus if g.mem_used >= 0 and g.mem_total >= 0]
    used = sum(g.mem_used for g in mem) / 1024
    total = sum(g.mem_total for g in mem) / 1024
    return f"{bars} {util} {used:.0f}/{total:.0f}G" if mem else f"{bars} {util}"


def gpu_memory(gpus: Sequence[Gpu]) -> str:
    """One bar per GPU: memory used of that GPU's total (`?` where it does not say)."""
    return "".join(
        _bar(g.mem_used / g.mem_total if g.mem_total else 0)
        if g.mem_used >= 0 and g.mem_total >= 0
        else "?"
        for g in gpus
    )


def host_line(link: HostView, width: int, clock: Clock) -> Text:
    """A node's header: its state on the first line (cut to `width`), then, under it, the
    job holding it and the time left, and its GPUs."""
    line = Text(no_wrap=True, overflow="ellipsis")
    more = Text(no_wrap=True)
    if link.connected:
        line.append("■ ", style="green")
        line.append(link.name, style="bold")
        line.append(f"  up {clock.since(link.since)}", style="grey62")
        if link.lease:  # a Slurm job's node: which job, and how long it has left
            left = link.lease_ends - clock.now if link.lease_ends else 0.0
            lease = Text(
                f"\n   {link.lease}" + (f" · {clock.left(left)} left" if left > 0 else ""),
                style="yellow" if 0 < left < 30 * 60 else "grey62",
            )
            lease.truncate(width, overflow="ellipsis")
            more.append_text(lease)
        if link.gpus:
            more.append(
                f"\n   util {gpu_summary(link.gpus)}\n   mem  {gpu_memory(link.gpus)}",
                style="grey62",
            )
    else:
        line.append("■ ", style="bold red")
        line.append(link.name, style="bold red")
        why = link.detail.removeprefix(f"{link.name}: ")
        line.append(f"  down {clock.since(link.since)}: {why}", style="red")
    line.truncate(width, overflow="ellipsis")
    line.append_text(more)
    return line


class Sidebar(ScrollView, can_focus=False):
    """Two lines per agent: mark, name, state, quiet time; then the focus label. A virtual
    list: only the rows on screen are drawn, each once until it changes (a fleet of 128 is
    ~260 rows), the whole list built again only when something on it changed or one of its
    clocks shows a new text (`stale`), and the selected agent is kept in view."""

    class Picked(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._rows: list[str] = []  # the agent each row belongs to ("" for a host's rows)
        self._lines: list[Text] = []
        self._keys: list[tuple[str, tuple[Span, ...]]] = []
        self._strips: dict[tuple[object, ...], Strip] = {}
        self._kept_in_view: str | None = None
        self._colours: tuple[str, dict[str, str]] | None = None
        # rows as built, by what they show: when the list is built again, most rows show
        # what they showed before
        self._made: dict[tuple[object, ...], Text] = {}
        # when the rows' first clock shows a new text, and the width and theme they were
        # built for: until one of those changes, building them again would change nothing
        self._due = 0.0
        self._built_for: tuple[int, str] = (0, "")

    def show(
        self,
        agents: list[AgentView],
        selected: str | None,
        marked: set[str],
        visible: set[str],
        links: dict[str, HostView],
        notes: dict[str, str] | None = None,
        oldest: dict[str, float] | None = None,
        clock: Clock | None = None,
    ) -> None:
        """`oldest`: per agent, when its oldest still-queued message was written; `clock`:
        the moment the rows show (the one `notes` were written with)."""
        clock = clock or Clock(time.time())
        colours = self.colours()
        grouped = len(links) > 1 or any(k != "local" for k in links)
        hosts = list(links)
        order = (
            sorted(agents, key=lambda a: hosts.index(a.host) if a.host in hosts else len(hosts))
            if grouped
            else agents
        )

        def build(width: int) -> tuple[list[Text], list[str]]:
            lines: list[Text] = []
            rows: list[str] = []
            current_host = None
            words = state_words(order, width, clock, oldest or {})
            for agent in order:
                if grouped and agent.host != current_host:
                    current_host = agent.host
                    link = links.get(current_host) or HostView(
                        name=current_host, connected=False, detail="no word from this host"
                    )
                    header = host_line(link, width, clock).split("\n")
                    lines += header
                    rows += [""] * len(header)
                lines.append(
                    self._row(
                        agent,
                        agent.name == selected,
                        agent.name in marked,
                        agent.name in visible,
                        width,
                        clock,
                        (oldest or {}).get(agent.name),
                        colours,
                        words,
                    )
                )
                focus = sidebar_note(agent) if asking(agent) else agent.focus or "—"
                key = ("focus", focus, width, agent.changes, id(colours))
                lines.append(
                    self._made.get(key)
                    or self._keep(key, self._focus_line(focus, agent.changes, width, colours))
                )
                rows += [agent.name, agent.name]
                note = (notes or {}).get(agent.name)
                if note:
                    style = "red" if "incomplete" in note or "stopped" in note else "cyan"
                    lines.append(Text(f"   {note}"[:width], style=style, no_wrap=True))
                    rows.append(agent.name)
            return lines, rows

        # a list taller than the sidebar has a scrollbar: its column and one between it and
        # the text (its thumb is no letter of a clock); guessed from the last list
        inner, height = self.content_region.width or 32, self.content_region.height
        room = {False: inner, True: inner - self.styles.scrollbar_size_vertical - 1}
        tall = self.virtual_size.height > height > 0
        lines, rows = build(width := max(10, room[tall]))
        if (len(lines) > height > 0) != tall:
            lines, rows = build(width := max(10, room[not tall]))
        keys = [(line.plain, tuple(line.spans)) for line in lines]
        self._rows = rows
        self._due, self._built_for = clock.due, (inner, self.app.theme)
        if len(keys) == len(self._keys) and width == self.virtual_size.width:
            changed = [
                i for i, (new, old) in enumerate(zip(keys, self._keys, strict=True)) if new != old
            ]
            self._lines, self._keys = lines, keys
            for i in changed:  # a clock that moved redraws its row, not the sidebar
                self.refresh_lines(i)
        else:
            self._lines, self._keys = lines, keys
            self.virtual_size = Size(width, len(lines))
            self.refresh()
        if selected != self._kept_in_view and selected in rows:
            self._kept_in_view = selected  # once per new selection: the wheel still scrolls
            self.scroll_to_region(
                Region(0, rows.index(selected), width, 2), animate=False, immediate=True
            )

    def stale(self, now: float) -> bool:
        """Whether the rows shown are out of date by themselves: a clock on them moved, or
        the sidebar's width or the theme changed. (Everything else they show is drawn when
        it changes.)"""
        return now >= self._due or self._built_for != (
            self.content_region.width or 32,
            self.app.theme,
        )

    def colours(self) -> dict[str, str]:
        """Each state's style in the current theme (the tiles' border colours)."""
        theme = self.app.theme
        if self._colours is None or self._colours[0] != theme:
            self._colours = (theme, state_styles(self.app.get_css_variables()))
        return self._colours[1]

    def render_line(self, y: int) -> Strip:
        i = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        if not 0 <= i < len(self._lines):
            return Strip.blank(width, self.rich_style)
        base = self.rich_style  # its colours under each row's own (rows are never blank)
        key = (self._keys[i], width, base)
        strip = self._strips.get(key)
        if strip is None:
            if len(self._strips) > 4 * len(self._lines) + 64:
                self._strips.clear()  # rows long gone (clocks moved on)
            line = self._lines[i]
            segments = [seg for seg in line.render(CONSOLE) if seg.text != "\n"]
            # the row's own style under its spans, the sidebar's under both
            under = base + CONSOLE.get_style(line.style) if line.style else base
            strip = Strip(segments).crop_extend(0, width, None).apply_style(under)
            self._strips[key] = strip
        return strip

    def _keep(self, key: tuple[object, ...], line: Text) -> Text:
        if len(self._made) > 8 * len(self._lines) + 256:
            self._made.clear()  # rows long gone (clocks moved on)
        self._made[key] = line
        return line

    def _row(
        self,
        agent: AgentView,
        selected: bool,
        marked: bool,
        visible: bool,
        width: int,
        clock: Clock,
        oldest: float | None,
        colours: dict[str, str],
        words: int,
    ) -> Text:
        """The agent's first row, built once for what it shows."""
        right = right_part(agent, clock, oldest, words)
        key = (agent.name, agent.state, right, selected, marked, visible, width, id(colours))
        made = self._made.get(key)
        if made is None:
            made = self._keep(
                key, self._agent_line(agent, selected, marked, visible, width, right, colours)
            )
        return made

    @staticmethod
    def _focus_line(
        focus: str, change: ChangeView | None, width: int, colours: dict[str, str]
    ) -> Text:
        """The agent's second row: its focus label, and its change at the right. The label
        keeps up to half the row (or all it needs) before the change takes a shorter form,
        and MIN_NAME cells before the change goes; the word `conflict` is shown only
        beside the whole label (its mark says it: the help explains both)."""
        whole = change_parts(change)
        keep = min(len(focus), max(MIN_NAME, width // 2 - 4))
        parts = change_fitted(whole, width - 4 - keep) or change_fitted(whole, width - 4 - MIN_NAME)
        right = sum(len(t) for t, _ in parts) + len(parts) - 1
        if (
            parts == whole
            and change is not None
            and change.conflicts
            and 3 + len(focus) + 1 + right > width
        ):
            parts = change_fitted(whole, right - len("conflict") - 1)
            right = sum(len(t) for t, _ in parts) + len(parts) - 1
        if not parts:  # (cut at a word, with an ellipsis, as beside a change)
            return Text("   " + clip(focus, width - 3), style="italic grey62", no_wrap=True)
        line = Text(no_wrap=True, overflow="ellipsis")
        room = width - right - 1
        line.append("   " + clip(focus, room - 3), style="italic grey62")
        line.append(" " * max(1, width - line.cell_len - right))
        styles = {
            "added": "green",
            "deleted": "red",
            "files": "grey62",
            # the theme's error colour (an exited agent's)
            "conflict": f"bold {colours.get('exited', 'red')}",
        }
        for i, (piece, role) in enumerate(parts):
            line.append(" " if i else "")
            line.append(piece, style=styles[role])
        line.truncate(width)
        return line

    @staticmethod
    def _agent_line(
        agent: AgentView,
        selected: bool,
        marked: bool,
        visible: bool,
        width: int,
        right: str,
        colours: dict[str, str],
    ) -> Text:
        state = agent.state
        style = colours.get(state, "")
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("▶" if selected else ("✓" if marked else " "), style="bold cyan")
        line.append(f"{STATE_MARKS.get(state, '·')} ", style=style)
        room = max(MIN_NAME, width - len(right) - 4)
        name = agent.name if len(agent.name) <= room else agent.name[: room - 1] + "…"
        line.append(name, style="bold reverse" if selected else ("bold" if visible else ""))
        line.append(" " * max(1, width - line.cell_len - len(right)))
        line.append(right, style=style)
        line.truncate(width, overflow="ellipsis")  # one row, never wrapped
        return line

    def on_click(self, event: events.Click) -> None:
        y = event.y - self.content_region.y + self.region.y + self.scroll_offset.y
        if 0 <= y < len(self._rows) and self._rows[y]:
            self.post_message(self.Picked(self._rows[y]))
