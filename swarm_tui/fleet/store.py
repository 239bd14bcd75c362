"""The fleet's SQLite journal: messages (queued before delivery), tokens, focus history.

WAL mode, one writer (the engine). A message is written as `queued` before anything is typed,
so a crash of swarm loses nothing: on restart the queue resumes from here.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    focus TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    updated REAL NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS messages_open ON messages(recipient, status);
CREATE TABLE IF NOT EXISTS focus_history (
    id INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    agent TEXT NOT NULL,
    label TEXT NOT NULL,
    by TEXT NOT NULL
);
"""

QUEUED, SENDING, DELIVERED, FAILED, UNCERTAIN = (
    "queued", "sending", "delivered", "failed", "uncertain")
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


class Store:
    """All durable state of one fleet, in one SQLite file."""

    def __init__(self, path: Path):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the process
        self.db.executescript(SCHEMA)

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
        with self.db:
            self.db.execute("UPDATE agents SET focus=? WHERE name=?", (label, agent))
            self.db.execute(
                "INSERT INTO focus_history(time, agent, label, by) VALUES (?,?,?,?)",
                (time.time(), agent, label, by),
            )

    # ---------------------------------------------------------------- messages
    def enqueue(self, sender: str, recipient: str, text: str) -> Message:
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO messages(created, sender, recipient, text, status, updated)"
            " VALUES (?,?,?,?,?,?)",
            (now, sender, recipient, text, QUEUED, now),
        )
        return Message(int(cur.lastrowid or 0), now, sender, recipient, text, QUEUED, now, "")

    def mark(self, msg_id: int, status: str, detail: str = "") -> None:
        self.db.execute(
            "UPDATE messages SET status=?, updated=?, detail=? WHERE id=?",
            (status, time.time(), detail, msg_id),
        )

    def open_messages(self, recipient: str) -> list[Message]:
        rows = self.db.execute(
            "SELECT * FROM messages WHERE recipient=? AND status IN (?,?) ORDER BY id",
            (recipient, *OPEN),
        ).fetchall()
        return [Message(*r) for r in rows]

    def message(self, msg_id: int) -> Message | None:
        row = self.db.execute("SELECT * FROM messages WHERE id=?", (msg_id,)).fetchone()
        return Message(*row) if row else None

    def messages(self, limit: int = 200) -> list[Message]:
        rows = self.db.execute(
            "SELECT * FROM messages ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [Message(*r) for r in reversed(rows)]

    def talk_graph(self) -> list[tuple[str, str, int]]:
        """(sender, recipient, count) for every pair that has exchanged messages."""
        rows = self.db.execute(
            "SELECT sender, recipient, COUNT(*) FROM messages GROUP BY sender, recipient"
            " ORDER BY COUNT(*) DESC"
        ).fetchall()
        return [(str(s), str(r), int(n)) for s, r, n in rows]
