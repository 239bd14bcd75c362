"""The fleet's SQLite journal, on a real file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm_tui.fleet.store import (
    DELIVERED,
    FAILED,
    QUEUED,
    SENDING,
    UNCERTAIN,
    Message,
    Store,
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "fleet.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    s = Store(db_path)
    try:
        yield s
    finally:
        s.close()


def test_file_is_in_wal_mode(store: Store, db_path: Path) -> None:
    assert db_path.exists()
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ------------------------------------------------------------------------------ messages
def test_enqueue_journals_a_queued_message(store: Store) -> None:
    msg = store.enqueue("human", "Gauss", "plan the refactor")
    assert isinstance(msg, Message)
    assert (msg.sender, msg.recipient, msg.text, msg.status, msg.detail) == (
        "human",
        "Gauss",
        "plan the refactor",
        QUEUED,
        "",
    )
    assert msg.id > 0 and msg.created == msg.updated
    assert store.message(msg.id) == msg


def test_open_messages_in_order_per_recipient(store: Store) -> None:
    a = store.enqueue("human", "Gauss", "first")
    store.enqueue("human", "Hilbert", "for someone else")
    b = store.enqueue("Hilbert", "Gauss", "second")
    c = store.enqueue("human", "Gauss", "third")
    assert a.id < b.id < c.id
    assert [m.text for m in store.open_messages("Gauss")] == ["first", "second", "third"]
    assert [m.text for m in store.open_messages("Hilbert")] == ["for someone else"]
    assert store.open_messages("Noether") == []


@pytest.mark.parametrize(
    ("status", "still_open"),
    [(SENDING, True), (QUEUED, True), (DELIVERED, False), (FAILED, False), (UNCERTAIN, False)],
)
def test_mark_moves_a_message_in_or_out_of_the_open_queue(
    store: Store, status: str, still_open: bool
) -> None:
    first = store.enqueue("human", "Gauss", "one")
    second = store.enqueue("human", "Gauss", "two")
    store.mark(first.id, status, detail="why")
    after = store.message(first.id)
    assert after is not None
    assert (after.status, after.detail) == (status, "why")
    assert after.updated >= first.updated
    ids = [m.id for m in store.open_messages("Gauss")]
    assert ids == ([first.id, second.id] if still_open else [second.id])


def test_text_is_stored_exactly(store: Store) -> None:
    text = "line one\nline two\t'quotes' \"double\" ; DROP TABLE messages; -- café 🐝 \\"
    msg = store.enqueue("Poincaré", "Gauss", text)
    got = store.message(msg.id)
    assert got is not None and got.text == text and got.sender == "Poincaré"


def test_message_unknown_id(store: Store) -> None:
    assert store.message(12345) is None


def test_messages_returns_the_latest_oldest_first(store: Store) -> None:
    for i in range(5):
        store.enqueue("human", "Gauss", f"m{i}")
    assert [m.text for m in store.messages(limit=3)] == ["m2", "m3", "m4"]
    assert [m.text for m in store.messages()] == ["m0", "m1", "m2", "m3", "m4"]


def test_talk_graph_counts_pairs_busiest_first(store: Store) -> None:
    for _ in range(3):
        store.enqueue("Gauss", "Hilbert", "x")
    store.enqueue("Hilbert", "Gauss", "y")
    for _ in range(2):
        store.enqueue("human", "Gauss", "z")
    store.mark(store.enqueue("Gauss", "Hilbert", "failed too").id, FAILED)
    assert store.talk_graph() == [
        ("Gauss", "Hilbert", 4),
        ("human", "Gauss", 2),
        ("Hilbert", "Gauss", 1),
    ]


def test_talk_graph_empty(store: Store) -> None:
    assert store.talk_graph() == []


# -------------------------------------------------------------------------------- tokens
def test_tokens_are_stable_per_agent_and_distinct(store: Store) -> None:
    gauss = store.token_for("Gauss")
    assert store.token_for("Gauss") == gauss
    hilbert = store.token_for("Hilbert")
    assert hilbert != gauss
    assert len(gauss) >= 32 and all(ch.isalnum() or ch in "-_" for ch in gauss)


def test_agent_for_token(store: Store) -> None:
    gauss = store.token_for("Gauss")
    hilbert = store.token_for("Hilbert")
    assert store.agent_for_token(gauss) == "Gauss"
    assert store.agent_for_token(hilbert) == "Hilbert"
    assert store.agent_for_token("not-a-token") is None
    assert store.agent_for_token("") is None


# --------------------------------------------------------------------------------- focus
def test_focus_and_its_history(store: Store) -> None:
    assert store.focus("Gauss") is None
    store.set_focus("Gauss", "tokenizer rewrite", by="human")
    assert store.focus("Gauss") == "tokenizer rewrite"
    store.set_focus("Gauss", "benchmarks", by="Gauss")
    assert store.focus("Gauss") == "benchmarks"
    store.set_focus("Gauss", "", by="human")
    assert store.focus("Gauss") is None
    rows = store.db.execute("SELECT agent, label, by FROM focus_history ORDER BY id").fetchall()
    assert rows == [
        ("Gauss", "tokenizer rewrite", "human"),
        ("Gauss", "benchmarks", "Gauss"),
        ("Gauss", "", "human"),
    ]
    times = [r[0] for r in store.db.execute("SELECT time FROM focus_history ORDER BY id")]
    assert times == sorted(times)


def test_set_focus_on_a_new_agent_gives_it_a_token(store: Store) -> None:
    store.set_focus("Noether", "type checker", by="human")
    token = store.token_for("Noether")
    assert store.agent_for_token(token) == "Noether"
    assert store.focus("Noether") == "type checker"


def test_focus_is_per_agent(store: Store) -> None:
    store.set_focus("Gauss", "a", by="human")
    store.set_focus("Hilbert", "b", by="human")
    assert (store.focus("Gauss"), store.focus("Hilbert")) == ("a", "b")


# ---------------------------------------------------------------------------- durability
def test_writes_are_visible_to_another_connection_at_once(store: Store, db_path: Path) -> None:
    # journaled before anything is typed: no open transaction holds the row back
    msg = store.enqueue("human", "Gauss", "durable")
    other = sqlite3.connect(db_path)
    try:
        row = other.execute("SELECT text, status FROM messages WHERE id=?", (msg.id,)).fetchone()
    finally:
        other.close()
    assert row == ("durable", QUEUED)


def test_everything_survives_closing_and_reopening(db_path: Path) -> None:
    first = Store(db_path)
    token = first.token_for("Gauss")
    first.token_for("Hilbert")
    sent = first.enqueue("human", "Gauss", "delivered one")
    first.mark(sent.id, DELIVERED)
    waiting = first.enqueue("Hilbert", "Gauss", "still queued")
    sending = first.enqueue("human", "Gauss", "was being typed")
    first.mark(sending.id, SENDING)
    first.set_focus("Gauss", "parser", by="human")
    graph = first.talk_graph()
    first.close()

    again = Store(db_path)
    try:
        assert again.token_for("Gauss") == token
        assert again.agent_for_token(token) == "Gauss"
        assert again.focus("Gauss") == "parser"
        assert [(m.id, m.status) for m in again.open_messages("Gauss")] == [
            (waiting.id, QUEUED),
            (sending.id, SENDING),
        ]
        assert again.message(sent.id) is not None
        assert again.message(sent.id).status == DELIVERED  # type: ignore[union-attr]
        assert again.talk_graph() == graph
        # new ids continue after the old ones
        assert again.enqueue("human", "Gauss", "after restart").id > sending.id
    finally:
        again.close()


def test_the_journal_and_its_wal_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """Messages and tokens are in these files: another local user must not read them."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        store = Store(tmp_path / "fleet.sqlite3")
        store.enqueue("human", "Ada", "secret")  # the WAL and its index now exist
        files = [tmp_path / n for n in ("fleet.sqlite3", "fleet.sqlite3-wal", "fleet.sqlite3-shm")]
        assert all(f.exists() for f in files)
        assert [stat.S_IMODE(f.stat().st_mode) for f in files] == [0o600] * 3
        store.close()
        os.chmod(files[0], 0o644)  # a journal written by an older swarm
        Store(files[0]).close()
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_a_new_swarm_home_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import stat

    from swarm_tui import paths

    home = tmp_path / "new-home"
    monkeypatch.setenv("SWARM_HOME", str(home))
    old = os.umask(0o022)
    try:
        paths.socket_path("demo")  # the first thing a client asks for
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert stat.S_IMODE((home / "run").stat().st_mode) == 0o700
    finally:
        os.umask(old)
