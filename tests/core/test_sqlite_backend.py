"""core.sqlite: a write transaction takes SQLite's write lock soon after another releases it, gives up after the
configured timeout as SQLite would, and leaves the connection's own busy timeout as it was."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection
from django.db.utils import OperationalError

from core.sqlite.base import DatabaseWrapper

# Connections of their own to files of their own, outside the test database.
pytestmark = pytest.mark.django_db


def wrapper(path: Path, *, timeout: float) -> DatabaseWrapper:
    settings = {
        **connection.settings_dict,
        "ENGINE": "core.sqlite",
        "NAME": str(path),
        "OPTIONS": {"timeout": timeout, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL"},
    }
    db = DatabaseWrapper(settings, alias=f"sqlite-{path.name}")
    db.ensure_connection()
    return db


@pytest.fixture
def pair(tmp_path: Path):
    holder, waiter = wrapper(tmp_path / "db.sqlite3", timeout=30), wrapper(tmp_path / "db.sqlite3", timeout=30)
    holder.connection.execute("CREATE TABLE t (n INTEGER)")
    yield holder, waiter
    holder.close()
    waiter.close()


def busy_timeout(db: DatabaseWrapper) -> int:
    return int(db.connection.execute("PRAGMA busy_timeout").fetchone()[0])


def test_a_write_transaction_waits_for_the_lock_and_takes_it_once_released(pair):
    holder, waiter = pair
    holder.connection.execute("BEGIN IMMEDIATE")
    holder.connection.execute("INSERT INTO t VALUES (1)")
    released = threading.Event()

    def release() -> None:
        released.wait(5)
        holder.connection.execute("COMMIT")

    thread = threading.Thread(target=release)
    thread.start()
    threading.Timer(0.05, released.set).start()
    waiter._start_transaction_under_autocommit()  # returns only with the lock held
    assert released.is_set()
    waiter.connection.execute("INSERT INTO t VALUES (2)")
    waiter.connection.execute("COMMIT")
    thread.join()
    assert [n for (n,) in waiter.connection.execute("SELECT n FROM t ORDER BY n")] == [1, 2]
    assert busy_timeout(waiter) == 30_000  # statements outside a transaction keep SQLite's handler


def test_a_lock_held_past_the_timeout_is_refused_as_sqlite_refuses_it(tmp_path):
    holder = wrapper(tmp_path / "db.sqlite3", timeout=30)
    waiter = wrapper(tmp_path / "db.sqlite3", timeout=0.05)
    try:
        holder.connection.execute("BEGIN IMMEDIATE")
        with pytest.raises(OperationalError, match="locked"):
            waiter._start_transaction_under_autocommit()
        assert busy_timeout(waiter) == 50
        holder.connection.execute("ROLLBACK")
        waiter._start_transaction_under_autocommit()
        waiter.connection.execute("ROLLBACK")
    finally:
        holder.close()
        waiter.close()
