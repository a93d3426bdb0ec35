"""The call log's writer: a runtime integration call's ``IntegrationCall`` row is written after the answer, off
the call's path: the INSERT and its commit were most of what a call added to the integrator's own time
(docs/benchmarks.md).

``record(row)`` stamps the row's ``created_at`` (the end of the call) and hands it to this process's writer, a
thread that inserts what has come in, in the order it came, in batches (one ``INSERT`` for every row recorded
while the previous one was written). So every call is logged, ``created_at`` says when it was made, and within
a process ids follow ``created_at``. A row reaches the database milliseconds after its answer (what the log
pages, ``/metrics`` and the dashboard read).

* **A caller inside a transaction** (``transaction.atomic()``; the test suite's tests) has its row written at
  once, in that transaction, as before: the writer's own connection could not see the caller's uncommitted
  rows, and a row written outside would outlive a rolled-back caller.
* **A normal stop** of the process (a gunicorn worker stopped, recycled after ``max_requests`` or timed out, a
  management command, ``Ctrl-C``) loses nothing: ``flush`` runs at exit (``atexit``) and writes what is
  pending. **A crash** (SIGKILL, the OOM killer) loses the rows not yet written: those of the calls answered in
  the last few milliseconds (the batch being inserted and what came in meanwhile).
* **The database not keeping up or down**: a failed batch is kept, in order, and tried again (0.5 s, doubling
  up to 10 s); a process keeps at most ``MAX_PENDING`` rows, and past that a caller writes its own row at once
  (and sees the database's error as before).
* **A configuration or account deleted** before its call's row is written: the row keeps its account with no
  configuration (as ``on_delete=SET_NULL`` leaves older rows); the row of a deleted account is dropped (its log
  went with it).

One writer per process, started with the first row (a process forked from a preloaded master starts its own; a
fork does not inherit the parent's rows). ``flush()`` writes everything recorded so far in the calling thread:
for tests and for a caller about to read its own calls.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque

from django.db import DatabaseError, IntegrityError, connection, connections, transaction
from django.utils import timezone

from accounts.models import Account
from integrations.models import IntegrationCall

__all__ = ("MAX_PENDING", "flush", "pending", "record", "shutdown")

logger = logging.getLogger(__name__)

BATCH_ROWS = 500  # rows per INSERT
MAX_PENDING = 10_000  # rows a process keeps while the database does not take them (about 10 MB)
RETRY_SECONDS = 0.5  # the first wait after a failed batch, doubled up to MAX_RETRY_SECONDS
MAX_RETRY_SECONDS = 10.0
IDLE_SECONDS = 60.0  # the writer's database connection is closed after this long without a row


class _Writer:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.rows: deque[IntegrationCall] = deque()
        self.lock = threading.Lock()  # guards ``rows`` and the flags
        self.wake = threading.Condition(self.lock)
        self.writing = threading.Lock()  # one batch at a time, so batches reach the database in order
        self.stopping = self.stopped = False
        self.thread = threading.Thread(target=self._run, name="integration-call-log", daemon=True)
        self.thread.start()

    def add(self, row: IntegrationCall) -> bool:
        with self.wake:
            if self.stopped or len(self.rows) >= MAX_PENDING:
                return False
            row.created_at = timezone.now()  # under the lock: ids follow created_at
            self.rows.append(row)
            self.wake.notify()
        return True

    def write_batch(self) -> bool:
        """Insert the oldest pending rows; False when there were none. A failure puts them back, in order."""
        with self.writing:
            with self.lock:
                batch = [self.rows.popleft() for _ in range(min(BATCH_ROWS, len(self.rows)))]
            if not batch:
                return False
            try:
                _insert(batch)
            except DatabaseError:
                with self.lock:
                    self.rows.extendleft(reversed(batch))
                raise
            except Exception:
                # Not the database's refusal but a bug: the batch would fail forever and hold up every later row.
                logger.exception("integration call log: %s row(s) dropped", len(batch))
                raise
        return True

    def stop(self, timeout: float) -> None:
        with self.wake:
            self.stopping = True
            self.wake.notify()
        self.thread.join(timeout)

    def _run(self) -> None:
        wait = RETRY_SECONDS
        while True:
            with self.wake:
                self.wake.wait_for(lambda: bool(self.rows) or self.stopping, timeout=IDLE_SECONDS)
                idle = not self.rows
                if idle and self.stopping:
                    self.stopped = True
                    break
            if idle:
                connections.close_all()  # this thread's own connections
                continue
            try:
                while self.write_batch():
                    pass
                wait = RETRY_SECONDS
            except DatabaseError:
                logger.exception(
                    "integration call log: %s row(s) not written yet, tried again in %g s", len(self.rows), wait
                )
                connections.close_all()  # a broken connection is opened afresh
                time.sleep(wait)
                wait = min(wait * 2, MAX_RETRY_SECONDS)
            except Exception:  # noqa: S110 - logged where the batch was dropped (write_batch)
                pass
        connections.close_all()


def _insert(batch: list[IntegrationCall]) -> None:
    try:
        with transaction.atomic():
            IntegrationCall.objects.bulk_create(batch)
    except IntegrityError:
        # An account or configuration deleted since its call (PostgreSQL checks foreign keys at commit): row by row.
        for row in batch:
            _insert_one(row)


def _insert_one(row: IntegrationCall) -> None:
    row.pk = None
    try:
        with transaction.atomic():
            row.save(force_insert=True)
        return
    except IntegrityError:
        if not Account.objects.filter(pk=row.account_id).exists():
            logger.info("integration call log: the row of deleted account %s dropped", row.account_id)
            return
    row.pk = None
    row.integration_id = None
    with transaction.atomic():
        row.save(force_insert=True)


_writer: _Writer | None = None
_writer_lock = threading.Lock()


def _this_process_writer(*, start: bool) -> _Writer | None:
    global _writer
    with _writer_lock:
        if _writer is None or _writer.pid != os.getpid():
            _writer = _Writer() if start else None
        return _writer


def record(row: IntegrationCall) -> None:
    """Log one call (a new, unsaved row): written after the answer, or at once inside a transaction (above)."""
    if connection.in_atomic_block:
        row.save(force_insert=True)
        return
    writer = _this_process_writer(start=True)
    assert writer is not None
    if not writer.add(row):
        row.save(force_insert=True)  # the database is behind by MAX_PENDING rows: this caller waits for it


def pending() -> int:
    """Rows recorded by this process and not written yet."""
    writer = _this_process_writer(start=False)
    if writer is None:
        return 0
    with writer.lock:
        return len(writer.rows)


def flush() -> None:
    """Write every row recorded so far by this process, in the calling thread (after the batch the writer may be
    inserting). Raises the database's error, the rows kept."""
    writer = _this_process_writer(start=False)
    if writer is not None:
        _drain(writer)


def _drain(writer: _Writer) -> None:
    while writer.write_batch():
        pass


def shutdown(timeout: float = 5.0) -> None:
    """Write what is pending and stop this process's writer (its database connection closed); a later ``record``
    starts another. Run at exit; tests run it before their database goes."""
    global _writer
    with _writer_lock:
        writer, _writer = _writer, None
    if writer is None or writer.pid != os.getpid():
        return
    try:
        _drain(writer)
    finally:
        writer.stop(timeout)


@atexit.register
def _shutdown_at_exit() -> None:
    try:
        shutdown()
    except DatabaseError:
        logger.exception("integration call log: rows lost at exit (the database refused them)")
