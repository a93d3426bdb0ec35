"""A deadline for one whole outgoing call (connecting, sending, the answer to its last byte), kept by closing
the connection.

``requests`` applies a timeout to each socket operation: an integrator that sends its answer one byte a second
never trips a 2-second read timeout, and a 64 KiB read waits for all its bytes. So a call runs ``within`` its
deadline: the guarded connections (``core.outbound``) ``attach`` their socket before they wait for the
answer, and one watchdog thread per process shuts that socket down when the deadline passes. A read blocked on
it returns at once, the call fails, and the caller sees ``Deadline.expired`` and reports a timeout.

The socket is shut down, not closed: its descriptor stays with its owner (no other connection can be hit by a
reused descriptor), and an idle connection left shut down in the pool is found dropped and replaced by urllib3.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar

__all__ = ("Deadline", "attach", "within")


class Deadline:
    """The deadline (``time.monotonic()``) of one call and the socket it waits on."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.expired = False
        self._socket: socket.socket | None = None
        self._finished = False
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            if self._finished or sock is None:
                return
            self._socket = sock
            if self.expired:
                _shut_down(sock)

    def expire(self) -> None:
        with self._lock:
            if self._finished:
                return
            self.expired = True
            if self._socket is not None:
                _shut_down(self._socket)

    def finish(self) -> None:
        with self._lock:
            self._finished = True
            self._socket = None


def _shut_down(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for a TLS socket: ssl.SSLSocket.shutdown would drop its TLS state under
    # the reading thread (a ValueError there instead of a connection error).
    with suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One thread per process that expires the deadlines as they pass (finished ones are skipped)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self.pid = os.getpid()
        threading.Thread(target=self._run, name="call-deadlines", daemon=True).start()

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if self._heap[0][2] is deadline:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                _, _, deadline = heapq.heappop(self._heap)
            deadline.expire()


_watchdog: _Watchdog | None = None
_watchdog_lock = threading.Lock()
_current: ContextVar[Deadline | None] = ContextVar("outgoing_call_deadline", default=None)


def _the_watchdog() -> _Watchdog:
    """This process's watchdog; started on first use, so a process forked from a preloaded master (gunicorn
    ``preload_app``) starts its own instead of counting on a thread that did not survive the fork."""
    global _watchdog
    with _watchdog_lock:
        if _watchdog is None or _watchdog.pid != os.getpid():
            _watchdog = _Watchdog()
        return _watchdog


@contextmanager
def within(seconds: float) -> Iterator[Deadline]:
    """Run the block's outgoing call under a deadline ``seconds`` from now."""
    deadline = Deadline(time.monotonic() + seconds)
    token = _current.set(deadline)
    _the_watchdog().watch(deadline)
    try:
        yield deadline
    finally:
        deadline.finish()
        _current.reset(token)


def attach(sock: socket.socket | None) -> None:
    """Called by a connection about to wait for an answer: its socket is shut down at the current deadline."""
    deadline = _current.get()
    if deadline is not None:
        deadline.attach(sock)
