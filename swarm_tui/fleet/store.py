"""The fleet's SQLite journal: messages (queued before delivery), tokens, focus history,
tasks and reminders.

WAL mode, one writer (the engine). A message is written as `queued` before anything is typed,
so a crash of swarm loses nothing: on restart the queue resumes from here. Rows come back as
frozen dataclasses built by column name (`Message`, `Task`, `Reminder`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from swarm_tui.fleet.records import (
    _RESET,
    CANCELLED,
    DELIVERED,
    FAILED,
    OPEN,
    OPEN_TASK,
    QUEUED,
    SENDING,
    UNCERTAIN,
    Message,
    NewReminder,
    NewTask,
    Reminder,
    ReminderAction,
    ReminderKind,
    Task,
    TaskStatus,
)

__all__ = [
    "CANCELLED",
    "DELIVERED",
    "FAILED",
    "OPEN",
    "OPEN_TASK",
    "QUEUED",
    "SENDING",
    "UNCERTAIN",
    "Message",
    "NewReminder",
    "NewTask",
    "Reminder",
    "ReminderAction",
    "ReminderKind",
    "Store",
    "Task",
    "TaskStatus",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    focus TEXT NOT NULL DEFAULT '',
    session TEXT NOT NULL DEFAULT ''  -- its CLI's conversation, to resume it after a reboot
);
CREATE TABLE IF NOT EXISTS leases (
    host TEXT NOT NULL,
    lease TEXT NOT NULL,
    asked REAL NOT NULL,  -- when its agents were asked for handoff notes
    PRIMARY KEY (host, lease)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    updated REAL NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    task INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS messages_open ON messages(recipient, status);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    position INTEGER NOT NULL,
    spec TEXT NOT NULL,
    verify TEXT NOT NULL DEFAULT '',
    verify_timeout REAL NOT NULL DEFAULT 600,
    judge TEXT NOT NULL DEFAULT '',
    judge_command TEXT NOT NULL DEFAULT '',
    max_rounds INTEGER NOT NULL DEFAULT 5,
    max_minutes REAL NOT NULL DEFAULT 240,
    review_on_idle INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL DEFAULT 'pending',
    rounds INTEGER NOT NULL DEFAULT 0,
    reasons TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    started REAL NOT NULL DEFAULT 0,
    updated REAL NOT NULL,
    prompt INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS verdicts (
    id INTEGER PRIMARY KEY,
    task INTEGER NOT NULL,
    time REAL NOT NULL,
    judge TEXT NOT NULL,
    verdict TEXT NOT NULL,
    reasons TEXT NOT NULL,
    raw TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reminders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    period REAL NOT NULL DEFAULT 0,
    at TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    skill TEXT NOT NULL DEFAULT '',
    paused INTEGER NOT NULL DEFAULT 0,
    next_due REAL NOT NULL DEFAULT 0,
    action TEXT NOT NULL DEFAULT 'message'
);
CREATE TABLE IF NOT EXISTS focus_history (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    agent TEXT NOT NULL,
    label TEXT NOT NULL,
    by TEXT NOT NULL
);
"""


_Row = TypeVar("_Row", Message, Task, Reminder)
_TASK_COLUMNS = frozenset(f.name for f in dataclasses.fields(Task))
_REMINDER_COLUMNS = frozenset(f.name for f in dataclasses.fields(Reminder))


def _rows(kind: type[_Row], cur: sqlite3.Cursor) -> list[_Row]:
    """The cursor's rows (of `SELECT *`) as `kind`, by column name: the table's column order
    does not matter, and a column the dataclass does not know (a journal written by a newer
    swarm, read with `Store.read_only`) is left out."""
    names = [d[0] for d in cur.description]
    known = {f.name for f in dataclasses.fields(kind)}
    return [
        kind(**{n: v for n, v in zip(names, r, strict=True) if n in known}) for r in cur.fetchall()
    ]


def _set_clause(fields: dict[str, object], columns: frozenset[str], table: str) -> str:
    unknown = set(fields) - columns
    if unknown or not fields:
        raise ValueError(f"{table}: no column(s) {sorted(unknown)} to update")
    return ", ".join(f"{k}=?" for k in fields)


class Store:
    """All durable state of one fleet, in one SQLite file."""

    def __init__(self, path: Path):
        self.path = path
        # the journal holds every message and every agent's token: 0600, and SQLite gives
        # its -wal and -shm files the journal's own mode
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            if file.exists() and file.stat().st_mode & 0o077:
                os.chmod(file, 0o600)
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the process
        self.db.executescript(SCHEMA)
        for table, column in (
            ("reminders", "action TEXT NOT NULL DEFAULT 'message'"),
            ("messages", "task INTEGER NOT NULL DEFAULT 0"),
            ("tasks", "prompt INTEGER NOT NULL DEFAULT 0"),
            ("agents", "session TEXT NOT NULL DEFAULT ''"),
        ):
            try:  # journals written by an older swarm
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            except sqlite3.OperationalError:
                pass  # the column is there

    @classmethod
    def read_only(cls, path: Path) -> Store:
        """The journal opened for reading only (no engine running: `swarm messages`, `tasks`,
        `remind list`); nothing is created or changed."""
        store = cls.__new__(cls)
        store.path = path
        store.db = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
        return store

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """All of the block's writes or none (the connection is in autocommit mode, where
        `with connection:` alone does not open a transaction)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ agents
    def token_for(self, agent: str) -> str:
        row = self.db.execute("SELECT token FROM agents WHERE name=?", (agent,)).fetchone()
        if row:
            return str(row[0])
        token = secrets.token_urlsafe(24)
        self.db.execute("INSERT INTO agents(name, token) VALUES (?, ?)", (agent, token))
        return token

    def agent_for_token(self, token: str) -> str | None:
        row = self.db.execute("SELECT name FROM agents WHERE token=?", (token,)).fetchone()
        return str(row[0]) if row else None

    def focus(self, agent: str) -> str | None:
        row = self.db.execute("SELECT focus FROM agents WHERE name=?", (agent,)).fetchone()
        return str(row[0]) if row and row[0] else None

    def set_focus(self, agent: str, label: str, by: str) -> None:
        self.token_for(agent)
        with self._transaction():
            self.db.execute("UPDATE agents SET focus=? WHERE name=?", (label, agent))
            self.db.execute(
                "INSERT INTO focus_history(time, agent, label, by) VALUES (?,?,?,?)",
                (time.time(), agent, label, by),
            )

    def session(self, agent: str) -> str:
        row = self.db.execute("SELECT session FROM agents WHERE name=?", (agent,)).fetchone()
        return str(row[0]) if row and row[0] else ""

    def set_session(self, agent: str, session: str) -> None:
        self.token_for(agent)
        self.db.execute("UPDATE agents SET session=? WHERE name=?", (session, agent))

    def lease_asked(self, host: str, lease: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM leases WHERE host=? AND lease=?", (host, lease)
            ).fetchone()
            is not None
        )

    def mark_lease_asked(self, host: str, lease: str) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO leases(host, lease, asked) VALUES (?,?,?)",
            (host, lease, time.time()),
        )

    def forget_sessions(self) -> None:
        """After `swarm down`: the next start begins new conversations, resumes none."""
        self.db.execute("UPDATE agents SET session=''")

    # ---------------------------------------------------------------- messages
    def enqueue(self, sender: str, recipient: str, text: str, task: int = 0) -> Message:
        (message,) = self.enqueue_all(sender, [recipient], text, task)
        return message

    def enqueue_all(
        self, sender: str, recipients: list[str], text: str, task: int = 0
    ) -> list[Message]:
        """One message per recipient, all journaled or none (one transaction)."""
        now = time.time()
        out = []
        with self._transaction():
            for recipient in recipients:
                cur = self.db.execute(
                    "INSERT INTO messages(created, sender, recipient, text, status, updated,"
                    " task) VALUES (?,?,?,?,?,?,?)",
                    (now, sender, recipient, text, QUEUED, now, task),
                )
                out.append(
                    Message(
                        int(cur.lastrowid or 0), now, sender, recipient, text, QUEUED, now, "", task
                    )
                )
        return out

    def mark(self, msg_id: int, status: str, detail: str = "") -> None:
        self.db.execute(
            "UPDATE messages SET status=?, updated=?, detail=? WHERE id=?",
            (status, time.time(), detail, msg_id),
        )

    def cancel_open(self, reason: str, recipient: str | None = None) -> int:
        """Settle what is still queued (all agents, or one) as cancelled, with the reason;
        returns how many. A row left `sending` may have been typed: it becomes uncertain."""
        where = " AND recipient=?" if recipient else ""
        args: tuple[object, ...] = (recipient,) if recipient else ()
        now = time.time()
        with self._transaction():
            n = self.db.execute(
                f"UPDATE messages SET status=?, updated=?, detail=? WHERE status=?{where}",
                (CANCELLED, now, reason, QUEUED, *args),
            )
            self.db.execute(
                f"UPDATE messages SET status=?, updated=?, detail=? WHERE status=?{where}",
                (UNCERTAIN, now, reason, SENDING, *args),
            )
        return int(n.rowcount)

    def settle_down(self, reason: str) -> tuple[int, int]:
        """After `swarm down`: nothing queued survives into the next run's new agents, and
        every open task goes back to pending, to be given again to whoever runs it next.
        Returns (messages cancelled, tasks reset); both are recorded, nothing is deleted."""
        cancelled = self.cancel_open(reason)
        return cancelled, self._reset_tasks(reason)

    def settle_gone(self, agent: str, before: float, reason: str) -> tuple[int, int, int]:
        """An agent whose previous run ended without `swarm down` (its tmux server died) is
        started anew: what was queued for the old conversation before `before` (wall time) is
        settled as `swarm down` would have, and its open tasks go back to pending. Returns
        (messages cancelled, messages uncertain, tasks reset)."""
        now = time.time()
        with self._transaction():
            n = self.db.execute(
                "UPDATE messages SET status=?, updated=?, detail=? WHERE status=? AND "
                "recipient=? AND created<?",
                (CANCELLED, now, reason, QUEUED, agent, before),
            )
            u = self.db.execute(
                "UPDATE messages SET status=?, updated=?, detail=? WHERE status=? AND "
                "recipient=? AND created<?",
                (UNCERTAIN, now, reason, SENDING, agent, before),
            )
        return int(n.rowcount), int(u.rowcount), self._reset_tasks(reason, agent)

    def settle_sending(self, reason: str) -> list[Message]:
        """Every row being typed becomes uncertain (it may or may not have arrived); returns
        them as they now are."""
        ids = [
            int(r[0])
            for r in self.db.execute(
                "SELECT id FROM messages WHERE status=? ORDER BY id", (SENDING,)
            )
        ]
        for msg_id in ids:
            self.mark(msg_id, UNCERTAIN, reason)
        return [m for m in (self.message(i) for i in ids) if m is not None]

    def _reset_tasks(self, reason: str, agent: str | None = None) -> int:
        where, args = (" AND agent=?", (agent,)) if agent else ("", ())
        with self._transaction():
            n = self.db.execute(
                "UPDATE tasks SET status=?, prompt=0, updated=?, reasons=? WHERE (status IN "
                f"({','.join('?' * len(_RESET))}) OR (status=? AND prompt!=0)){where}",
                (TaskStatus.PENDING, time.time(), reason, *_RESET, TaskStatus.PENDING, *args),
            )
        return int(n.rowcount)

    def oldest_open(self) -> dict[str, float]:
        """Per recipient, when its oldest still-queued message was written (wall time)."""
        rows = self.db.execute(
            "SELECT recipient, MIN(created) FROM messages WHERE status IN (?,?) GROUP BY recipient",
            OPEN,
        ).fetchall()
        return {str(r): float(c) for r, c in rows}

    def open_messages(self, recipient: str) -> list[Message]:
        return _rows(
            Message,
            self.db.execute(
                "SELECT * FROM messages WHERE recipient=? AND status IN (?,?) ORDER BY id",
                (recipient, *OPEN),
            ),
        )

    def message(self, msg_id: int) -> Message | None:
        rows = _rows(Message, self.db.execute("SELECT * FROM messages WHERE id=?", (msg_id,)))
        return rows[0] if rows else None

    def messages(self, limit: int = 200) -> list[Message]:
        rows = _rows(
            Message, self.db.execute("SELECT * FROM messages ORDER BY id DESC LIMIT ?", (limit,))
        )
        return rows[::-1]

    # ------------------------------------------------------------------- tasks
    def add_task(self, agent: str, task: NewTask, origin: str) -> int:
        """The task, last in the agent's queue; returns its id."""
        now = time.time()
        fields = dataclasses.asdict(task)
        row = self.db.execute(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM tasks WHERE agent=?", (agent,)
        ).fetchone()
        cols = ["agent", "position", "origin", "created", "updated", *fields]
        vals = [agent, row[0], origin, now, now, *fields.values()]
        cur = self.db.execute(
            f"INSERT INTO tasks({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals
        )
        return int(cur.lastrowid or 0)

    def tasks(self, agent: str | None = None) -> list[Task]:
        """The tasks of one agent, or of all, in queue order."""
        q = (
            "SELECT * FROM tasks"
            + (" WHERE agent=?" if agent else "")
            + " ORDER BY agent, position"
        )
        return _rows(Task, self.db.execute(q, (agent,) if agent else ()))

    def current_tasks(self) -> dict[str, Task]:
        """Each agent's current task (its first open one), in one query."""
        closed = (TaskStatus.COMPLETE.value, TaskStatus.STOPPED.value)
        out: dict[str, Task] = {}
        for t in _rows(
            Task,
            self.db.execute(
                "SELECT * FROM tasks WHERE status NOT IN (?, ?) ORDER BY agent, position", closed
            ),
        ):
            out.setdefault(t.agent, t)
        return out

    def task(self, task_id: int) -> Task | None:
        rows = _rows(Task, self.db.execute("SELECT * FROM tasks WHERE id=?", (task_id,)))
        return rows[0] if rows else None

    def update_task(self, task_id: int, **fields: object) -> None:
        """Set columns of a task (by their names in `Task`); `updated` is set to now."""
        sets = _set_clause(fields, _TASK_COLUMNS - {"id", "updated"}, "tasks")
        self.db.execute(
            f"UPDATE tasks SET {sets}, updated=? WHERE id=?",
            (*fields.values(), time.time(), task_id),
        )

    def add_verdict(self, task_id: int, judge: str, verdict: str, reasons: str, raw: str) -> None:
        self.db.execute(
            "INSERT INTO verdicts(task, time, judge, verdict, reasons, raw) VALUES (?,?,?,?,?,?)",
            (task_id, time.time(), judge, verdict, reasons, raw),
        )

    def all_verdicts(self) -> list[tuple[int, float, str, str, str]]:
        """(task, time, judge, verdict, reasons) for every task, oldest first."""
        rows = self.db.execute(
            "SELECT task, time, judge, verdict, reasons FROM verdicts ORDER BY id"
        ).fetchall()
        return [(int(k), float(t), str(j), str(v), str(r)) for k, t, j, v, r in rows]

    def verdicts(self, task_id: int) -> list[tuple[float, str, str, str]]:
        """(time, judge, verdict, reasons) for a task, oldest first."""
        rows = self.db.execute(
            "SELECT time, judge, verdict, reasons FROM verdicts WHERE task=? ORDER BY id",
            (task_id,),
        ).fetchall()
        return [(float(t), str(j), str(v), str(r)) for t, j, v, r in rows]

    # --------------------------------------------------------------- reminders
    def upsert_reminder(self, key: str, reminder: NewReminder) -> int:
        """Insert a reminder unless one with this key exists (its schedule is kept); returns
        the id of the reminder with this key."""
        fields = dataclasses.asdict(reminder)
        cols = ["key", *fields]
        self.db.execute(
            f"INSERT OR IGNORE INTO reminders({', '.join(cols)}) VALUES "
            f"({', '.join('?' * len(cols))})",
            [key, *fields.values()],
        )
        row = self.db.execute("SELECT id FROM reminders WHERE key=?", (key,)).fetchone()
        return int(row[0])

    def reminders(self) -> list[Reminder]:
        return _rows(Reminder, self.db.execute("SELECT * FROM reminders ORDER BY id"))

    def reminder(self, rid: int) -> Reminder | None:
        rows = _rows(Reminder, self.db.execute("SELECT * FROM reminders WHERE id=?", (rid,)))
        return rows[0] if rows else None

    def update_reminder(self, rid: int, **fields: object) -> None:
        """Set columns of a reminder (by their names in `Reminder`)."""
        sets = _set_clause(fields, _REMINDER_COLUMNS - {"id"}, "reminders")
        self.db.execute(f"UPDATE reminders SET {sets} WHERE id=?", (*fields.values(), rid))

    def delete_reminder(self, rid: int) -> None:
        self.db.execute("DELETE FROM reminders WHERE id=?", (rid,))

    def talk_graph(self) -> list[tuple[str, str, int]]:
        """(sender, recipient, count) for every pair that has exchanged messages."""
        rows = self.db.execute(
            "SELECT sender, recipient, COUNT(*) FROM messages GROUP BY sender, recipient"
            " ORDER BY COUNT(*) DESC"
        ).fetchall()
        return [(str(s), str(r), int(n)) for s, r, n in rows]
