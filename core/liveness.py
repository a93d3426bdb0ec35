"""Worker and beat processes prove they are alive: a heartbeat of their own, in the database.

A process that calls ``start`` gets a daemon thread that writes its ``core.models.LiveProcess`` row (``hostname:pid``)
now and every ``LIVENESS_INTERVAL_SECONDS``; ``stop`` (a clean shutdown) removes it. A thread, not the task's own
loop: a process in the middle of a 5-minute upload still proves it, and a process killed (SIGKILL, out of memory)
stops proving it at once. ``identity`` is the name a process writes on what it leases; ``dead`` tells which of
those names have not been seen for ``LIVENESS_TIMEOUT_SECONDS``, so the sweepers can take their work over within
seconds instead of waiting for a lease to run out.

Each beat writes and then closes its own database connection: a worker process keeps no second connection open
for it (the connection arithmetic of docs/capacity.md counts one per worker process).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING

from django.apps import apps
from django.conf import settings
from django.db import connection
from django.utils import timezone

if TYPE_CHECKING:
    from core.models import LiveProcess

# Imported by config.celery before Django's apps are loaded: the model and its kinds are looked up when used.
WORKER = "worker"
BEAT = "beat"

__all__ = ("BEAT", "WORKER", "beat_now", "dead", "identity", "live", "machine", "prune", "reap", "start", "stop")

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict[str, object] = {}  # "name", "kind", "thread", "stop" (threading.Event), "pid"


def _model() -> type[LiveProcess]:
    return apps.get_model("core", "LiveProcess")  # type: ignore[return-value]


def machine() -> str:
    """This machine's name: ``MACHINE_NAME``, or the host name (two stacks on one host set it apart)."""
    return (str(settings.MACHINE_NAME) or socket.gethostname())[:150]


def _name() -> str:
    return f"{machine()}:{os.getpid()}"


def identity() -> str:
    """This process's name while it beats (``hostname:pid``), else "" (a web process, a test, a shell): a lease
    with no owner is taken over only when it runs out."""
    with _lock:
        if _state.get("pid") != os.getpid():  # a forked child inherits the dict, not the thread
            return ""
        return str(_state.get("name", ""))


def beat_now(kind: str = WORKER) -> None:
    """Write this process's row now (the thread's work; tests call it directly)."""
    now = timezone.now()
    name = _name()
    updated = _model().objects.filter(name=name).update(seen_at=now, kind=kind)
    if not updated:
        _model().objects.bulk_create(
            [
                _model()(
                    name=name,
                    kind=kind,
                    hostname=machine(),
                    pid=os.getpid(),
                    started_at=now,
                    seen_at=now,
                )
            ],
            ignore_conflicts=True,
        )


def _run(kind: str, stopping: threading.Event) -> None:
    """The thread: a beat every interval until ``stop`` (``start`` wrote the first one)."""
    interval = float(settings.LIVENESS_INTERVAL_SECONDS)
    while not stopping.wait(interval):
        try:
            beat_now(kind)
        except Exception:  # the database may be away for a moment: the next beat tries again
            logger.warning("liveness: this process's heartbeat could not be written", exc_info=True)
        finally:
            connection.close()  # the thread's own connection: no second connection held per process


def start(kind: str = WORKER) -> str:
    """Begin proving this process alive (idempotent). Returns its name."""
    with _lock:
        if _state.get("pid") == os.getpid():
            return str(_state["name"])
        stopping = threading.Event()
        thread = threading.Thread(target=_run, args=(kind, stopping), name="liveness", daemon=True)
        _state.clear()
        _state.update(name=_name(), kind=kind, thread=thread, stop=stopping, pid=os.getpid())
    # The first beat in the caller's thread: the process is known alive before it takes any work.
    try:
        beat_now(kind)
    except Exception:
        logger.warning("liveness: the first heartbeat could not be written", exc_info=True)
    thread.start()
    return _name()


def stop() -> None:
    """A clean shutdown: stop beating and remove this process's row (what it leased was released by its tasks)."""
    with _lock:
        if _state.get("pid") != os.getpid():
            return
        stopping = _state.get("stop")
        name = str(_state["name"])
        thread = _state.get("thread")
        _state.clear()
    if isinstance(stopping, threading.Event):
        stopping.set()
    if isinstance(thread, threading.Thread) and thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout=10)  # a beat under way would write the row again after the delete below
    try:
        _model().objects.filter(name=name).delete()
    except Exception:
        logger.warning("liveness: this process's row could not be removed", exc_info=True)


def _cutoff() -> timedelta:
    return timedelta(seconds=float(settings.LIVENESS_TIMEOUT_SECONDS))


def live(*, kind: str | None = None, hostname: str | None = None) -> list[LiveProcess]:
    """The processes seen within ``LIVENESS_TIMEOUT_SECONDS`` (of one kind, on one machine)."""
    rows = _model().objects.filter(seen_at__gt=timezone.now() - _cutoff())
    if kind is not None:
        rows = rows.filter(kind=kind)
    if hostname is not None:
        rows = rows.filter(hostname=hostname)
    return list(rows)


def dead(names: Iterable[str]) -> set[str]:
    """Those of ``names`` (non-empty owners of leases) not seen within ``LIVENESS_TIMEOUT_SECONDS``: killed, hung
    or gone. A name never seen at all counts as dead: a process writes its row before it leases anything."""
    wanted = {name for name in names if name}
    if not wanted:
        return set()
    seen = set(
        _model().objects.filter(name__in=wanted, seen_at__gt=timezone.now() - _cutoff()).values_list("name", flat=True)
    )
    return wanted - seen


def reap(*, kind: str = WORKER) -> list[str]:
    """Remove the rows of processes of ``kind`` not seen within ``LIVENESS_TIMEOUT_SECONDS`` and return their
    names: processes that died without a clean shutdown (``stop`` removes its own row), noticed once. A caller
    that cannot tell what such a process held (an import hand-off's message) takes over everything it might have.
    Two callers at once may both see a row; each acts, which costs a repeated hand-off, never a loss."""
    stale = list(_model().objects.filter(kind=kind, seen_at__lte=timezone.now() - _cutoff()).values_list("pk", "name"))
    if not stale:
        return []
    _model().objects.filter(pk__in=[pk for pk, _ in stale]).delete()
    return [name for _, name in stale]


def prune(*, older_than: timedelta = timedelta(hours=1)) -> int:
    """Remove the rows of processes gone for longer than ``older_than`` (restarts leave one row each)."""
    deleted, _ = _model().objects.filter(seen_at__lt=timezone.now() - older_than).delete()
    return deleted
