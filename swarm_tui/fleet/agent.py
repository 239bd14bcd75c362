"""One agent of the running fleet: its spec, its pane, its screen and its state."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from swarm_tui.agents.base import Adapter, AgentState, Option, plain
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.fleet.store import Message
from swarm_tui.fleet.tracker import StateTracker
from swarm_tui.protocol.models import ChangeView

# seconds after swarm resized an agent's window in which its output is the CLI redrawing for
# the new size, not activity (unless it works anyway): paging the view, zooming or resizing
# the terminal must not end an idle stretch, move its clocks, or count as work
REDRAW_GRACE = 2.0


@dataclass(eq=False)
class Agent:
    spec: ResolvedAgent
    adapter: Adapter
    token: str
    focus: str
    tracker: StateTracker
    window: str = ""
    pane: str = ""
    screen: list[str] = field(default_factory=list)  # last capture, with escape sequences
    dirty: bool = True
    paused: bool = False  # tmux paused its %output (pause-after): continue it once read
    muted: bool = False  # off screen and busy: its %output paused on purpose (fleet/screens.py)
    activity_at: float = 0.0  # when tmux last reported it active while muted (monotonic)
    last_capture: float = 0.0
    last_output_wall: float = field(default_factory=time.time)
    resized_at: float = 0.0  # when swarm last resized its window (monotonic): the CLI redraws
    inbox: asyncio.Queue[Message] = field(default_factory=asyncio.Queue)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    pending: int = 0  # messages queued or being delivered
    waiting: dict[int, float] = field(default_factory=dict)  # their ids -> written (wall)
    worked_at: float = 0.0  # wall time it last started working
    stalled: str = ""  # why it counts as stalled (fleet/stalls.py), "" when it does not
    asked: tuple[str, tuple[Option, ...]] = ("", ())  # the dialog the views last heard of
    workdir: str = ""  # its git worktree on its host ("" without one; fleet/worktrees.py)
    repo_prefix: str = ""  # where its `repo` is inside the repository ("sub/" or "")
    base: str = ""  # the branch its worktree's branch is compared with and merged into
    changes: ChangeView | None = None  # its worktree's change, as last read
    session: str = ""  # its CLI's conversation, as its hooks last said (fleet/comeback.py)
    resumed: bool = False  # its window was made anew and its CLI resumed `session`
    first: deque[Message] = field(default_factory=deque)  # typed before the queue's rest

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def role(self) -> str:
        return self.spec.role

    @property
    def host(self) -> str:
        return self.spec.host

    @property
    def cwd(self) -> str:
        """Where its CLI runs: its `cwd`, or in its worktree the same place relative to the
        repository (the worktree's top when `cwd` is outside it)."""
        spec = self.spec
        if not self.workdir:
            return spec.cwd
        inside = self.workdir.rstrip("/") + "/" + self.repo_prefix
        repo = spec.repo.rstrip("/")
        if spec.cwd and repo and (spec.cwd == repo or spec.cwd.startswith(repo + "/")):
            return (inside + spec.cwd[len(repo) + 1 :]).rstrip("/")
        return self.workdir

    @property
    def state(self) -> AgentState:
        return self.tracker.state

    @property
    def oldest_queued(self) -> float | None:
        """When the oldest message still waiting in its queue was written (wall time)."""
        return min(self.waiting.values()) if self.waiting else None

    def redraws(self, now: float) -> bool:
        """Whether output at `now` (monotonic) is the CLI redrawing for a window swarm just
        resized: its screen is read again, but it is not counted as the agent's output."""
        return now - self.resized_at < REDRAW_GRACE and self.tracker.state not in (
            AgentState.WORKING,
            AgentState.STARTING,
        )

    def plain_screen(self) -> list[str]:
        return [plain(line) for line in self.screen]

    def summary(self) -> dict[str, object]:
        """What `swarm ls --json` shows of this agent."""
        r = self.tracker.reading
        return {
            "name": self.name,
            "role": self.role,
            "cli": self.spec.cli,
            "model": self.spec.model,
            "host": self.host,
            "state": self.state.value,
            "focus": self.focus,
            "question": r.question,
            "options": [list(o) for o in r.options],
            "context_left": r.context_left,
            "last_output": self.last_output_wall,
            # when the shown state began, as wall time (the tracker keeps monotonic time)
            "state_since": time.time() - (time.monotonic() - self.tracker.since),
            "queued": self.pending,
            "oldest_queued": self.oldest_queued,
            "window": self.window,
            "stalled": self.stalled,
            "changes": self.changes.model_dump() if self.changes is not None else None,
        }
