"""Readiness checks (Observability): what makes a machine not ready, and what makes it
degraded.

``CHECKS`` decide readiness: the database, the migrations, the broker and the beat heartbeat; one failing makes
``/health/ready`` answer 503 (a load balancer takes the machine out). ``DEGRADED_CHECKS`` tell the truth about the
rest without taking the web out of rotation, since its requests are still served: this machine's worker and beat
processes (``core.liveness`` rows with this machine's host name, as many as ``HEALTH_EXPECT_WORKERS`` and
``HEALTH_EXPECT_BEAT`` say), two beats believing they are active, and export queues whose deliveries have been due
for longer than ``HEALTH_EXPORT_DUE_MAX_AGE_SECONDS``. One failing makes the answer 200 with status
``degraded``, naming it: an alert, not a reason to stop sending traffic.

Each check answers ``(ok, detail)``. A detail never carries a URL, a host, an account or an exception message
(they may hold credentials or name tenants): only what failed, counts and ages, and the exception's type, since
the health endpoints need no authentication. The dashboard, behind a login, names them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from kombu import Connection

from core import liveness
from ops import selectors
from ops.services import BEAT

CheckResult = tuple[bool, str]

# A lease taken from a beat still alive shows as two active beats for this long (then the log tells the rest).
CONTESTED_MEMORY = timedelta(minutes=10)

# Set once the migrations were found applied: the code's migrations cannot change without a restart, and loading
# the migration graph from disk on every probe would cost more than the rest of the checks together.
_migrations_applied = False


def check_database() -> CheckResult:
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not ready", whatever its class
        return False, f"unreachable ({type(exc).__name__})"
    return True, "ok"


def check_migrations() -> CheckResult:
    global _migrations_applied
    if _migrations_applied:
        return True, "ok"
    try:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as exc:
        return False, f"cannot be read ({type(exc).__name__})"
    if plan:
        return False, f"{len(plan)} not applied"
    _migrations_applied = True
    return True, "ok"


def check_broker() -> CheckResult:
    url: str = settings.CELERY_BROKER_URL
    options = dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    if url.startswith("filesystem://"):
        # The filesystem transport has no server: it is reachable when its folders are there.
        folders = [options.get(key) for key in ("data_folder_in", "data_folder_out", "processed_folder")]
        missing = [
            str(key)
            for key, folder in zip(("queue", "queue", "processed"), folders, strict=True)
            if not (folder and Path(str(folder)).is_dir())
        ]
        return (False, f"folder missing: {', '.join(sorted(set(missing)))}") if missing else (True, "ok")
    timeout = settings.HEALTH_BROKER_TIMEOUT_SECONDS
    try:
        with Connection(url, connect_timeout=timeout, transport_options=options) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
    except Exception as exc:
        return False, f"unreachable ({type(exc).__name__})"
    return True, "ok"


def check_beat() -> CheckResult:
    max_age = settings.HEALTH_BEAT_MAX_AGE_SECONDS
    if max_age <= 0:
        return True, "not checked"
    try:
        beat_at = selectors.heartbeat_at(name=BEAT)
    except Exception as exc:
        return False, f"cannot be read ({type(exc).__name__})"
    if beat_at is None:
        return False, "no heartbeat yet"
    age = (timezone.now() - beat_at).total_seconds()
    if age > max_age:
        return False, f"stale: last heartbeat {int(age)} s ago (limit {max_age} s)"
    return True, "ok"


def this_host() -> str:
    """This machine's name as ``core.liveness`` writes it (``MACHINE_NAME``, else the host name)."""
    return liveness.machine()


def _stopped(kind: str) -> str:
    """This machine's processes of ``kind`` that stopped proving alive without shutting down (killed, hung),
    within the hour their rows are kept: pids and how long ago, for the operator to look for."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.LIVENESS_TIMEOUT_SECONDS))
    rows = selectors.stopped_processes(kind=kind, hostname=this_host(), seen_before=cutoff)
    if not rows:
        return ""
    now = timezone.now()
    gone = ", ".join(f"pid {pid} {int((now - seen).total_seconds())} s ago" for pid, seen in rows[:3])
    return f"; stopped without shutting down: {gone}" + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


def check_workers() -> CheckResult:
    expected: int = settings.HEALTH_EXPECT_WORKERS
    try:
        if expected > 0:
            alive = len(liveness.live(kind=liveness.WORKER, hostname=this_host()))
            stopped = _stopped(liveness.WORKER)
            if alive < expected:
                return False, f"{alive} of {expected} worker processes alive on this machine{stopped}"
            return True, f"{alive} worker processes alive on this machine{stopped}"
        everywhere = liveness.live(kind=liveness.WORKER)
    except Exception as exc:
        return False, f"cannot be read ({type(exc).__name__})"
    if not everywhere:
        return False, "no worker process alive on any machine"
    machines = len({row.hostname for row in everywhere})
    return True, f"{len(everywhere)} worker processes alive on {machines} machines (none expected on this one)"


def check_beats() -> CheckResult:
    try:
        lease = selectors.beat_lease(name=BEAT)
        beats = liveness.live(kind=liveness.BEAT)
        here = [row for row in beats if row.hostname == this_host()]
        stopped = _stopped(liveness.BEAT) if settings.HEALTH_EXPECT_BEAT else ""
    except Exception as exc:
        return False, f"cannot be read ({type(exc).__name__})"
    now = timezone.now()
    if lease is not None and lease.contested_at is not None and now - lease.contested_at < CONTESTED_MEMORY:
        ago = int((now - lease.contested_at).total_seconds())
        return False, f"two active beats: the lease was taken {ago} s ago from a beat still alive"
    if lease is None or lease.expires_at <= now or not beats:
        return False, "no beat holds the lease"
    if settings.HEALTH_EXPECT_BEAT and not here:
        return False, f"no beat process alive on this machine{stopped}"
    standby = len(beats) - 1
    return True, f"one active, {standby} standing by; {len(here)} on this machine"


def check_export_queues() -> CheckResult:
    max_age: int = settings.HEALTH_EXPORT_DUE_MAX_AGE_SECONDS
    if max_age <= 0:
        return True, "not checked"
    try:
        overdue = selectors.overdue_export_queues(due_before=timezone.now() - timedelta(seconds=max_age))
    except Exception as exc:
        return False, f"cannot be read ({type(exc).__name__})"
    if not overdue:
        return True, "ok"
    deliveries = sum(q.overdue for q in overdue)
    return False, (
        f"{len(overdue)} export queues with {deliveries} deliveries due for over {max_age} s "
        f"(oldest {overdue[0].oldest_due_age_seconds} s)"
    )


CHECKS: dict[str, Callable[[], CheckResult]] = {
    "database": check_database,
    "migrations": check_migrations,
    "broker": check_broker,
    "beat": check_beat,
}


DEGRADED_CHECKS: dict[str, Callable[[], CheckResult]] = {
    "workers": check_workers,
    "beats": check_beats,
    "export_queues": check_export_queues,
}

OK = "ok"
DEGRADED = "degraded"
NOT_READY = "error"


@dataclass(frozen=True)
class Report:
    """``status``: ``ok``, ``degraded`` (every readiness check passes, a degraded check fails) or ``error`` (not
    ready); ``checks``: every check's ``{"ok", "detail"}``; ``degraded``: the failing degraded checks' names."""

    status: str
    checks: dict[str, dict[str, object]]
    degraded: list[str]

    @property
    def ready(self) -> bool:
        return self.status != NOT_READY


def report() -> Report:
    """All checks, each run even when an earlier one failed (the operator wants the whole picture)."""
    checks: dict[str, dict[str, object]] = {}
    for name, check in {**CHECKS, **DEGRADED_CHECKS}.items():
        ok, detail = check()
        checks[name] = {"ok": ok, "detail": detail}
    ready = all(checks[name]["ok"] for name in CHECKS)
    degraded = [name for name in DEGRADED_CHECKS if not checks[name]["ok"]]
    status = NOT_READY if not ready else DEGRADED if degraded else OK
    return Report(status=status, checks=checks, degraded=degraded)
