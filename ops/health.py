"""Readiness checks (spec issue 7, Observability): database, migrations, broker, beat heartbeat.

Each check answers ``(ok, detail)``. A detail never carries a URL, a host or an exception message (they may hold
credentials): only what failed and the exception's type, since the health endpoints need no authentication.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from kombu import Connection

from ops import selectors
from ops.services import BEAT

CheckResult = tuple[bool, str]

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


CHECKS: dict[str, Callable[[], CheckResult]] = {
    "database": check_database,
    "migrations": check_migrations,
    "broker": check_broker,
    "beat": check_beat,
}


def readiness() -> tuple[bool, dict[str, dict[str, object]]]:
    """All checks, each run even when an earlier one failed (the operator wants the whole picture)."""
    results: dict[str, dict[str, object]] = {}
    for name, check in CHECKS.items():
        ok, detail = check()
        results[name] = {"ok": ok, "detail": detail}
    return all(r["ok"] for r in results.values()), results
