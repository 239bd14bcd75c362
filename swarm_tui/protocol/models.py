"""The wire between the engine and whoever watches it (a terminal UI, a browser, a script).

One JSON object per line over the fleet's Unix socket. A watcher opens with
`{"op": "watch", "version": VERSION, "visible": [...]}`; the engine answers with a `Snapshot`,
then streams `Event`s. On the same connection the watcher may send `{"op": "visible",
"names": [...]}` to say which agents it shows (their screens come to it, latest first, never a
backlog). Everything a watcher does to the fleet (send, focus, tasks...) is an ordinary
one-shot request on its own connection. Both sides import this module and nothing else of
each other.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

VERSION = 1
HEARTBEAT = 5.0  # seconds between two `Alive` events on a watch stream

# task statuses, as the journal writes them
PENDING, IN_PROGRESS, CLAIMED, JUDGING = "pending", "in-progress", "claimed-done", "judging"
INCOMPLETE, NO_VERDICT, COMPLETE, STOPPED = "incomplete", "no-verdict", "complete", "stopped"
OPEN_TASK = (PENDING, IN_PROGRESS, CLAIMED, JUDGING, INCOMPLETE, NO_VERDICT)


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class ChangeView(_View):
    """The size of an agent's change in its worktree against its base (committed and not),
    as read when the agent last went idle."""

    added: int = 0
    deleted: int = 0
    files: int = 0
    branch: str = ""
    base: str = ""
    conflicts: bool | None = None  # its branch conflicts with the base; None: not known
    error: str = ""  # why it could not be read ("" when it was)


class AgentView(_View):
    name: str
    role: str
    host: str = "local"
    cli: str = ""
    model: str = ""
    state: str  # starting | working | idle | needs-permission | exited | unreachable
    focus: str = ""
    question: str = ""  # what a permission prompt asks
    # its options, numbered as `swarm` answers them: [("1", "Yes"), ("2", "No") …]
    options: list[tuple[str, str]] = Field(default_factory=list)
    context_left: int | None = None
    queued: int = 0
    oldest_queued: float | None = None  # wall time the oldest queued message was written
    last_output: float | None = None
    state_since: float | None = None  # wall time the current state began
    window: str = ""
    stalled: str = ""  # why the engine counts it as stalled ([notify] stall_after), or ""
    changes: ChangeView | None = None  # its worktree's change (None: it has no worktree)


class SkillView(_View):
    """A skill as the engine's host has it (the engine renders skills for its agents, so a
    view on another machine completes the engine's skills, not its own)."""

    name: str
    description: str = ""
    params: dict[str, str | None] = Field(default_factory=dict)  # None: required
    preview: str = ""  # the first lines of its body


class GpuView(_View):
    index: int
    util: int
    mem_used: int
    mem_total: int


class HostView(_View):
    name: str
    connected: bool
    detail: str = ""
    since: float = 0.0  # wall time of the last change
    gpus: list[GpuView] | None = None
    lease: str = ""  # what holds the node ("Slurm job 123")
    lease_ends: float = 0.0  # wall time that ends (0: never)


class TaskView(_View):
    id: int
    agent: str
    position: int = 0
    spec: str
    verify: str = ""
    judge: str = ""
    status: str
    rounds: int = 0
    reasons: str = ""
    origin: str = ""
    max_rounds: int = 5
    review_on_idle: bool = True
    created: float = 0.0
    updated: float = 0.0


class VerdictView(_View):
    task: int
    time: float
    judge: str
    verdict: str
    reasons: str = ""


class ReminderView(_View):
    id: int
    target: str
    kind: str  # every | idle | at
    period: float = 0.0
    at: str = ""
    text: str = ""
    skill: str = ""
    paused: bool = False
    next_due: float = 0.0
    action: str = "message"


class MessageView(_View):
    id: int
    created: float
    sender: str
    recipient: str
    text: str
    status: str
    updated: float
    detail: str = ""
    task: int = 0


class HistoryView(_View):
    """An agent's tmux history as read just now: line 1 is the oldest line kept, the lines
    on its screen come last; colours kept as SGR escape sequences (nothing else)."""

    agent: str
    lines: list[str]
    truncated: bool = False  # older lines were left out (the line or byte bound)


class GrepLine(_View):
    line: int  # its number in the agent's history as read (1: the oldest line kept)
    text: str  # plain text
    match: bool = False  # False: a line of context


class GrepHits(_View):
    """One run of an agent's history: matching lines and their context, in order."""

    agent: str
    lines: list[GrepLine]


class GrepView(_View):
    hits: list[GrepHits]
    matches: int
    truncated: bool = False  # the search stopped at its bound of matches (or bytes)
    skipped: list[str] = Field(default_factory=list)  # agents not searched, one line each


class DiffFileView(_View):
    """One changed file: `part` says whether the change is committed on the agent's branch
    or still in its working tree (untracked files are uncommitted, `untracked` set)."""

    path: str
    old_path: str = ""  # a rename's or copy's old name
    added: int = 0
    deleted: int = 0
    binary: bool = False
    part: Literal["committed", "uncommitted"] = "committed"
    untracked: bool = False


class DiffView(_View):
    """An agent's change in its worktree against its base: the files with their counts,
    then the patches (git's unified diff): commits on its branch since it left the base,
    and what is not committed yet (new files included)."""

    agent: str
    host: str = "local"
    worktree: str  # its path on the agent's host
    branch: str
    base: str
    merge_base: str = ""  # the commit the branch left the base at
    commits: list[str] = Field(default_factory=list)  # "<short id> <subject>", newest first
    files: list[DiffFileView] = Field(default_factory=list)
    committed: str = ""  # unified diff merge-base..HEAD
    uncommitted: str = ""  # unified diff HEAD..working tree, untracked files as new ones
    trimmed: str = ""  # what the size bound left out, in words ("" when nothing)
    conflicts: list[str] | None = None  # files that conflict with the base; None: unknown
    # the change in all (committed and not together, as the sidebar counts it)
    added: int = 0
    deleted: int = 0
    changed: int = 0  # files


class Work(_View):
    """Tasks, verdicts, reminders and the judge's log: what the judge pane and the sidebar's
    notes show. Sent whole when any of it changes (it is small)."""

    tasks: list[TaskView] = Field(default_factory=list)
    verdicts: list[VerdictView] = Field(default_factory=list)
    reminders: list[ReminderView] = Field(default_factory=list)
    countdowns: dict[str, float] = Field(default_factory=dict)  # agent -> seconds, when read
    judge_log: list[str] = Field(default_factory=list)


class NotifyView(_View):
    """What of the layout's `[notify]` a view follows: the kinds that ring its terminal
    (None: all) and the coalescing window."""

    bell: list[str] | None = None
    every: float = 60.0


class Snapshot(_View):
    event: Literal["snapshot"] = "snapshot"
    version: int = VERSION
    fleet: str
    layout_path: str
    engine_pid: int
    agents: list[AgentView]  # in tile order
    hosts: list[HostView]
    work: Work
    messages: list[MessageView] = Field(default_factory=list)  # the most recent, oldest first
    layout_problems: list[str] = Field(default_factory=list)  # the last edit, not applied
    layout_partly: bool = False
    notify: NotifyView = Field(default_factory=NotifyView)


class AgentChanged(_View):
    event: Literal["agent"] = "agent"
    agent: AgentView


class ScreenChanged(_View):
    event: Literal["screen"] = "screen"
    name: str
    lines: list[str]


class HostChanged(_View):
    event: Literal["host"] = "host"
    host: HostView


class MessageChanged(_View):
    event: Literal["message"] = "message"
    message: MessageView


class WorkChanged(_View):
    event: Literal["work"] = "work"
    work: Work


class Notice(_View):
    event: Literal["notice"] = "notice"
    text: str


class LayoutChanged(_View):
    """Agents were added, removed or reordered: the whole picture again."""

    event: Literal["layout"] = "layout"
    snapshot: Snapshot


class LayoutInvalid(_View):
    event: Literal["layout-invalid"] = "layout-invalid"
    problems: list[str]
    partly: bool = False


class Ended(_View):
    """The fleet is over (stopped by `swarm down`, or its tmux server died)."""

    event: Literal["ended"] = "ended"
    reason: str
    deliberate: bool


class Alive(_View):
    """The engine runs: sent every HEARTBEAT seconds, so a view can tell a quiet fleet from
    an engine that stopped answering (a stopped process, a half-open link)."""

    event: Literal["alive"] = "alive"


Event = Annotated[
    Snapshot
    | AgentChanged
    | ScreenChanged
    | HostChanged
    | MessageChanged
    | WorkChanged
    | Notice
    | LayoutChanged
    | LayoutInvalid
    | Ended
    | Alive,
    Field(discriminator="event"),
]
EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


def encode(event: BaseModel) -> bytes:
    return event.model_dump_json().encode() + b"\n"


def encode_screen(name: str, lines: list[str]) -> bytes:
    """`encode(ScreenChanged(name=name, lines=lines))`, without building the model: the
    engine sends one for every screen a tile shows change (hundreds a second)."""
    return (
        json.dumps(
            {"event": "screen", "name": name, "lines": lines},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()
        + b"\n"
    )


def decode(line: bytes | str) -> Any:
    return EVENTS.validate_json(line)
