"""One beat sends the periodic tasks, any other stands by: django-celery-beat's DatabaseScheduler
behind a lease in the database (``ops.models.BeatLease``).

Every tick the scheduler renews its lease (``BEAT_LEASE_SECONDS``) or, when another beat holds it, waits; a
standby looks again every third of the lease and takes the lease once it has run out, so a beat killed on one
machine is replaced by a standby on another within the lease plus a third. A beat that shuts down cleanly gives
its lease up at once. The schedule's ``last_run_at`` is saved before each task is sent, and a beat that takes over
reads it again: a periodic task is not sent twice in one interval because the beat sending it changed.

The beat process also proves it is alive (``core.liveness``, kind ``beat``), for ``/health/ready``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django_celery_beat.schedulers import DatabaseScheduler

from core import liveness
from ops import services

logger = logging.getLogger(__name__)

HEARTBEAT_ENTRY = "ops-beat-heartbeat"


class LeasedScheduler(DatabaseScheduler):
    """``CELERY_BEAT_SCHEDULER``: sends due tasks only while it holds the beat lease."""

    _holder = ""
    _leading = False
    _standby_logged = False
    _closed = False
    _ticking = False
    _released = False

    def setup_schedule(self) -> None:
        super().setup_schedule()
        self._holder = liveness.start(liveness.BEAT)

    @property
    def lease_seconds(self) -> float:
        return float(settings.BEAT_LEASE_SECONDS)

    @property
    def renew_every(self) -> float:
        return self.lease_seconds / 3

    def _hold(self) -> bool:
        try:
            close_old_connections()
            state = services.hold_beat_lease(holder=self._holder, seconds=self.lease_seconds)
        except Exception:  # the database is away: send nothing, since another beat may hold the lease by now
            logger.warning("beat: the lease could not be renewed; sending nothing until it is", exc_info=True)
            self._leading = False
            return False
        if state.held and not self._leading:
            if state.took_over_from and state.contested:
                logger.error(
                    "beat: took the schedule over from %s, which is still alive: it stalled longer than the lease "
                    "(BEAT_LEASE_SECONDS=%g) and may still send",
                    state.took_over_from,
                    self.lease_seconds,
                )
            elif state.took_over_from:
                logger.warning("beat: took the schedule over from %s (its lease ran out)", state.took_over_from)
            else:
                logger.info("beat: active, holding the lease (%s)", self._holder)
            self._reload()
            self._send_heartbeat()
        elif not state.held and (self._leading or not self._standby_logged):
            logger.warning(
                "beat: standby; %s sends the periodic tasks, this beat takes over if its lease (%g s) runs out",
                state.holder or "another beat",
                self.lease_seconds,
            )
            self._standby_logged = True
        self._leading = state.held
        return state.held

    def _send_heartbeat(self) -> None:
        """The heartbeat at once when this beat starts leading, rather than an interval later: a fresh machine's
        ``/health/ready`` (and a takeover's) need not wait ``BEAT_HEARTBEAT_INTERVAL_SECONDS`` for its first one."""
        entry = settings.CELERY_BEAT_SCHEDULE.get(HEARTBEAT_ENTRY)
        if entry is None:
            return
        try:
            self.app.send_task(entry["task"], expires=float(entry["schedule"]))
        except Exception:  # the broker is away: the schedule sends the next one
            logger.warning("beat: the first heartbeat could not be sent", exc_info=True)

    def _reload(self) -> None:
        """Read the schedule again, with the last runs the previous holder saved."""
        self._dirty.clear()
        self._schedule = self.all_as_schedule()
        self._heap = None
        self._heap_invalidated = False  # a change seen while standing by is in what was just read

    def reserve(self, entry: Any) -> Any:
        # The schedule's own entry advances too: a heap rebuilt from it (the schedule changed) must not find the
        # task just sent still due.
        new_entry = super().reserve(entry)
        if self._schedule is not None and new_entry.name in self._schedule:
            self._schedule[new_entry.name] = new_entry
        return new_entry

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if self._closed:
            # Closed by the SIGTERM handler, whose SystemExit a library under way (redis-py in a publish) can
            # swallow: the beat gives its lease up and stops instead of running on.
            self.close()
            raise SystemExit
        self._ticking = True
        try:
            if not self._hold():
                return self.renew_every
            return min(float(super().tick(*args, **kwargs)), self.renew_every)
        finally:
            self._ticking = False

    def apply_entry(self, entry: Any, producer: Any = None) -> None:
        # The run is saved before the task is sent: a beat killed in between skips one run rather than letting
        # the standby that takes over send it a second time.
        self.sync()
        super().apply_entry(entry, producer=producer)

    def close(self) -> None:
        self._closed = True
        if self._ticking or self._released:
            # Celery's SIGTERM handler closes the scheduler from inside whatever the main thread was doing: in a
            # tick, a query may be under way on this thread's connection (psycopg's lock: a second query from the
            # handler would wait for ever). The beat's loop ends, or the next tick sees it closed: both close again.
            return
        self._released = True
        if self._leading:
            self._leading = False
            try:
                services.release_beat_lease(holder=self._holder)
                logger.info("beat: lease given up on shutdown")
            except Exception:
                logger.warning("beat: the lease could not be given up; a standby takes over when it runs out")
        liveness.stop()
        super().close()
