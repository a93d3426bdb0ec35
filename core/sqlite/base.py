"""Django's SQLite backend; a write transaction waits for the database's write lock by polling it every
millisecond or so, not through SQLite's own busy handler.

With ``transaction_mode`` IMMEDIATE (config/settings.py) every write transaction takes the one write lock at
``BEGIN``. SQLite's busy handler retries a busy lock after 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 and then every
100 ms, so under a steady stream of short writes from the web, the worker and beat, a waiter keeps waking when the
lock is taken again: measured (bench/exports.py, embedded default, 5,000 outgoing orders at ~70 a second) an
export sender's lease transaction waited 0.54-0.86 s, exactly the handler's cumulative sleeps, several times a
minute, which made the commit-to-receipt p99 1.1-2.3 s. Polling every 0.5-1.5 ms (jittered) takes the lock within
about a millisecond of its release. A statement outside a transaction keeps SQLite's handler with the configured
``timeout``; the poll gives up after the same ``timeout`` and raises as SQLite would ("database is locked").
No maintained package does this for Django; it is one method.
"""

from __future__ import annotations

import random
import sqlite3
import time

from django.db.backends.sqlite3 import base
from django.db.utils import OperationalError

# Seconds between two tries of a busy write lock, at least (each wait adds up to as much again, at random).
POLL_SECONDS = 0.0005


class DatabaseWrapper(base.DatabaseWrapper):
    def _start_transaction_under_autocommit(self) -> None:  # type: ignore[misc]  # private in django-stubs
        mode = getattr(self, "transaction_mode", None)
        if mode is None:
            self.cursor().execute("BEGIN")
            return
        raw = self.connection
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
        deadline = time.monotonic() + timeout
        raw.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    raw.execute(f"BEGIN {mode}")
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise OperationalError(*exc.args) from exc
                    if time.monotonic() >= deadline:
                        raise OperationalError(*exc.args) from exc
                time.sleep(POLL_SECONDS * (1 + random.random()))  # noqa: S311 - jitter, not a secret
        finally:
            raw.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
