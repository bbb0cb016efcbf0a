"""``labels.write_transaction``: the one BEGIN IMMEDIATE / COMMIT / ROLLBACK of the label and campaign stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from centrum.annotation.labels import write_transaction


def _db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)  # autocommit, as labels.connect opens it
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER "
                 "REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    return conn


def _rows(conn: sqlite3.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT id FROM parent ORDER BY id")]


def test_commits_on_leaving_and_rolls_back_what_raised(tmp_path: Path) -> None:
    conn = _db(tmp_path / "t.sqlite3")
    with write_transaction(conn):
        conn.execute("INSERT INTO parent (id) VALUES (1)")
        assert conn.in_transaction
    assert not conn.in_transaction and _rows(conn) == [1]
    with pytest.raises(KeyError), write_transaction(conn):
        conn.execute("INSERT INTO parent (id) VALUES (2)")
        raise KeyError("stop")
    assert not conn.in_transaction and _rows(conn) == [1]


def test_a_block_may_end_it_itself_and_return(tmp_path: Path) -> None:
    conn = _db(tmp_path / "t.sqlite3")

    def dry_run() -> list[int]:
        with write_transaction(conn):
            conn.execute("INSERT INTO parent (id) VALUES (3)")
            seen = _rows(conn)
            conn.execute("ROLLBACK")
            return seen

    assert dry_run() == [3] and not conn.in_transaction and _rows(conn) == []


def test_a_commit_that_fails_is_rolled_back_not_left_open(tmp_path: Path) -> None:
    """A deferred foreign key is checked at COMMIT: the COMMIT fails and leaves SQLite's transaction open unless the
    helper rolls it back (the next BEGIN would fail with "cannot start a transaction within a transaction")."""
    conn = _db(tmp_path / "t.sqlite3")
    with pytest.raises(sqlite3.IntegrityError), write_transaction(conn):
        conn.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
    assert not conn.in_transaction
    with write_transaction(conn):
        conn.execute("INSERT INTO parent (id) VALUES (4)")
    assert _rows(conn) == [4] and conn.execute("SELECT COUNT(*) FROM child").fetchone()[0] == 0
