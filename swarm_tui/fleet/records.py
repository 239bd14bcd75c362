"""The journal's records: a message and its delivery states, a task and its states, a
reminder; each a frozen dataclass built from a row by column name (fleet/store.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

QUEUED, SENDING, DELIVERED, FAILED, UNCERTAIN, CANCELLED = (
    "queued",
    "sending",
    "delivered",
    "failed",
    "uncertain",
    "cancelled",
)
OPEN = (QUEUED, SENDING)


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    created: float
    sender: str
    recipient: str
    text: str
    status: str
    updated: float
    detail: str
    task: int = 0  # the task this message is about (its prompt, a re-prompt, a reminder)


class TaskStatus(StrEnum):
    """Where a task is (the journal stores the value; it equals the plain string)."""

    PENDING = "pending"  # its prompt not delivered yet
    IN_PROGRESS = "in-progress"
    CLAIMED = "claimed-done"  # the worker ran `swarm done`; a review follows
    JUDGING = "judging"
    INCOMPLETE = "incomplete"  # sent back with the judge's reasons
    COMPLETE = "complete"
    STOPPED = "stopped"  # a loop limit, or a prompt that could not be delivered
    NO_VERDICT = "no-verdict"


OPEN_TASK = frozenset(TaskStatus) - {TaskStatus.COMPLETE, TaskStatus.STOPPED}
_RESET = tuple(sorted(OPEN_TASK - {TaskStatus.PENDING}))  # back to pending after a stop


class ReminderKind(StrEnum):
    EVERY = "every"  # every `period` seconds
    IDLE = "idle"  # after `period` seconds idle (the stall watchdog)
    AT = "at"  # at a time of day, `at` (HH:MM)


class ReminderAction(StrEnum):
    MESSAGE = "message"  # type the text or skill into the agent
    FRESH = "fresh"  # a scheduled fresh start


@dataclass(frozen=True, slots=True)
class NewTask:
    """A task as it is given (layout, `swarm task`, the UI); the store adds the rest."""

    spec: str
    verify: str = ""
    verify_timeout: float = 600.0
    judge: str = ""
    judge_command: str = ""
    max_rounds: int = 5
    max_minutes: float = 240.0
    review_on_idle: bool = True


@dataclass(frozen=True, slots=True)
class Task:
    """A row of `tasks`."""

    id: int
    agent: str
    position: int  # its place in the agent's queue
    spec: str
    verify: str
    verify_timeout: float
    judge: str
    judge_command: str
    max_rounds: int
    max_minutes: float
    review_on_idle: bool
    status: TaskStatus
    rounds: int
    reasons: str
    origin: str
    created: float
    started: float
    updated: float
    prompt: int = 0  # the message carrying its prompt while that is on its way (0: none)

    def __post_init__(self) -> None:  # from SQLite: a plain string and an integer
        object.__setattr__(self, "status", TaskStatus(self.status))
        object.__setattr__(self, "review_on_idle", bool(self.review_on_idle))


@dataclass(frozen=True, slots=True)
class NewReminder:
    """A reminder as it is scheduled; the store adds its id."""

    target: str  # an agent's name, 'role:NAME' or 'all'
    kind: ReminderKind
    period: float = 0.0
    at: str = ""
    text: str = ""
    skill: str = ""
    next_due: float = 0.0  # wall time (every, at)
    action: ReminderAction = ReminderAction.MESSAGE


@dataclass(frozen=True, slots=True)
class Reminder:
    """A row of `reminders`."""

    id: int
    key: str  # `layout:<index>:<spec>` or `cli:<time>`: a layout's reminder is written once
    target: str
    kind: ReminderKind
    period: float
    at: str
    text: str
    skill: str
    paused: bool
    next_due: float
    action: ReminderAction = ReminderAction.MESSAGE

    def __post_init__(self) -> None:  # from SQLite: plain strings and an integer
        object.__setattr__(self, "kind", ReminderKind(self.kind))
        object.__setattr__(self, "action", ReminderAction(self.action))
        object.__setattr__(self, "paused", bool(self.paused))
