"""Reads of the ops app: operational aggregates over every account (docs/operations.md, Observability).

These are the operator's view of the platform, not a tenant's, so unlike the other apps' selectors they take no
account: they answer "how is the service doing", grouped by account where that helps. They are cheap aggregate
queries (one per question, no per-row work) because ``/metrics`` runs them on every scrape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Min, Q, QuerySet, Sum
from django.utils import timezone

from core.models import CircuitBreaker, LiveProcess
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from imports.models import ImportItem, ImportStatus
from integrations.models import IntegrationCall
from ledger.models import Checkout
from ops.models import BeatLease, Heartbeat

# Upper bounds (milliseconds) of the latency histograms: HTTP calls to integrators and destinations.
LATENCY_BUCKETS_MS: tuple[int, ...] = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


def circuit_breakers_by_state() -> list[tuple[str, int]]:
    """How many destinations' breakers are in each state (a closed one with no failure has no row)."""
    rows = CircuitBreaker.objects.values_list("state").annotate(n=Count("id")).order_by("state")
    return [(state, n) for state, n in rows]


def paused_export_deliveries() -> list[tuple[str, str, int]]:
    """(account, queue, n): pending deliveries waiting for their destination's breaker to reopen."""
    rows = (
        ExportDelivery.objects.filter(status=ExportStatus.PENDING, paused_until__gt=timezone.now())
        .values_list("account__identifier", "queue__name")
        .annotate(n=Count("id"))
        .order_by("account__identifier", "queue__name")
    )
    return [(account, queue, n) for account, queue, n in rows]


def disabled_export_queues() -> list[tuple[str, str]]:
    """(account, queue) of the export queues the service disabled after days of failure, still off."""
    rows = (
        ExportQueue.objects.filter(enabled=False, disabled_at__isnull=False)
        .values_list("account__identifier", "name")
        .order_by("account__identifier", "name")
    )
    return list(rows)


def heartbeat_at(*, name: str) -> datetime | None:
    return Heartbeat.objects.filter(name=name).values_list("beat_at", flat=True).first()


def beat_lease(*, name: str) -> BeatLease | None:
    """The beat lease's row (``ops.beat``): who sends the periodic tasks, until when, and when it was contested."""
    return BeatLease.objects.filter(name=name).first()


def stopped_processes(*, kind: str, hostname: str, seen_before: datetime) -> list[tuple[int, datetime]]:
    """(pid, last seen) of the processes of ``kind`` on ``hostname`` last seen before ``seen_before`` and never
    shut down (a clean shutdown removes the row), the latest first."""
    rows = LiveProcess.objects.filter(kind=kind, hostname=hostname, seen_at__lt=seen_before).order_by("-seen_at")
    return list(rows.values_list("pid", "seen_at"))


def live_processes() -> list[LiveProcess]:
    """Every worker and beat row (alive or not yet pruned), by machine: the dashboard's list."""
    return list(LiveProcess.objects.order_by("hostname", "kind", "pid"))


@dataclass(frozen=True)
class OverdueQueue:
    """An export queue with deliveries that have been due (pending, their next attempt passed) for too long."""

    account: str
    queue: str
    overdue: int
    oldest_due_at: datetime

    @property
    def oldest_due_age_seconds(self) -> int:
        return max(0, int((timezone.now() - self.oldest_due_at).total_seconds()))


def overdue_export_queues(*, due_before: datetime) -> list[OverdueQueue]:
    """The enabled export queues with pending deliveries due before ``due_before``, the longest overdue first.

    A delivery waiting for a retry or for its destination's breaker is due only from its next attempt on; so this
    finds queues that nobody delivers (no worker, a lease held by a dead process), not receivers that fail. Reads
    the ``(status, next_attempt_at)`` index: only the overdue rows are counted."""
    rows = (
        ExportDelivery.objects.filter(status=ExportStatus.PENDING, next_attempt_at__lt=due_before, queue__enabled=True)
        .values_list("account__identifier", "queue__name")
        .annotate(n=Count("id"), oldest=Min("next_attempt_at"))
        .order_by("oldest")
    )
    return [OverdueQueue(account=a, queue=q, overdue=n, oldest_due_at=oldest) for a, q, n, oldest in rows]


@dataclass(frozen=True)
class QueueBacklog:
    account: str
    queue_id: int
    queue: str
    enabled: bool
    pending: int
    oldest_pending_at: datetime | None

    @property
    def oldest_pending_age_seconds(self) -> float:
        if self.oldest_pending_at is None:
            return 0.0
        return max(0.0, (timezone.now() - self.oldest_pending_at).total_seconds())


def export_backlog() -> list[QueueBacklog]:
    """Every export queue with its pending (not yet delivered) items and the age of the oldest one."""
    pending: dict[int, tuple[int, datetime | None]] = {
        row["queue_id"]: (row["pending"], row["oldest"])
        for row in ExportItem.objects.filter(status=ExportStatus.PENDING)
        .order_by()
        .values("queue_id")
        .annotate(pending=Count("id"), oldest=Min("created_at"))
    }
    queues = ExportQueue.objects.order_by("account__identifier", "name").values(
        "id", "name", "enabled", "account__identifier"
    )
    return [
        QueueBacklog(
            account=q["account__identifier"],
            queue_id=q["id"],
            queue=q["name"],
            enabled=q["enabled"],
            pending=pending.get(q["id"], (0, None))[0],
            oldest_pending_at=pending.get(q["id"], (0, None))[1],
        )
        for q in queues
    ]


def import_backlog() -> tuple[int, datetime | None]:
    """Queued import items not yet materialised, and when the oldest was queued."""
    row = ImportItem.objects.filter(status=ImportStatus.PENDING).aggregate(n=Count("id"), oldest=Min("created_at"))
    return row["n"], row["oldest"]


def import_items_by_status(*, since: datetime) -> list[tuple[str, str, int]]:
    """Import items queued since ``since``, by kind and status (the status list lets the database use its
    ``(status, created_at)`` index)."""
    rows = (
        ImportItem.objects.filter(status__in=ImportStatus.values, created_at__gte=since)
        .order_by()
        .values("kind", "status")
        .annotate(n=Count("id"))
    )
    return [(row["kind"], row["status"], row["n"]) for row in rows]


def checkout_warnings_by_code(*, since: datetime) -> list[tuple[str, str, int]]:
    """(account, warning code, count) over the checkouts stored since ``since`` (docs/amounts.md, warnings).

    Only checkouts with warnings are read (the rest are left out by the query), and their codes counted here:
    counting inside a JSON array is not one portable SQL aggregate."""
    counts: dict[tuple[str, str], int] = {}
    rows = (
        Checkout.objects.filter(created_at__gte=since)
        .exclude(warnings=[])
        .values_list("account__identifier", "warnings")
        .iterator(chunk_size=1000)
    )
    for account, warnings in rows:
        for warning in warnings or ():
            key = (account, str(warning.get("code", "")))
            counts[key] = counts.get(key, 0) + 1
    return sorted((account, code, n) for (account, code), n in counts.items())


def export_items_by_queue(*, since: datetime) -> list[tuple[str, str, str, int]]:
    """Export items created since ``since``, by account, queue and status."""
    rows = (
        ExportItem.objects.filter(created_at__gte=since)
        .order_by()
        .values("account__identifier", "queue__name", "status")
        .annotate(n=Count("id"))
    )
    return [(row["account__identifier"], row["queue__name"], row["status"], row["n"]) for row in rows]


def export_retries(*, since: datetime) -> list[tuple[str, str, bool, int]]:
    """Delivery attempts after the first (retries) since ``since``, by account, queue and outcome."""
    rows = (
        ExportAttempt.objects.filter(started_at__gte=since, number__gt=1)
        .order_by()
        .values("account__identifier", "delivery__queue__name", "ok")
        .annotate(n=Count("id"))
    )
    return [(row["account__identifier"], row["delivery__queue__name"], row["ok"], row["n"]) for row in rows]


@dataclass(frozen=True)
class Histogram:
    labels: dict[str, str]
    # Cumulative counts per upper bound (milliseconds), as Prometheus wants them.
    buckets: list[tuple[int, int]]
    count: int
    sum_ms: int


def _histograms(qs: QuerySet, *, field: str, labels: dict[str, str]) -> list[Histogram]:
    """One aggregate query: per label group, the count at or below each bucket bound, the count and the sum."""
    bounds = {f"le_{b}": Count("id", filter=Q(**{f"{field}__lte": b})) for b in LATENCY_BUCKETS_MS}
    rows = qs.order_by().values(*labels.values()).annotate(count=Count("id"), total=Sum(field), **bounds)
    return [
        Histogram(
            labels={name: str(row[column]) for name, column in labels.items()},
            buckets=[(b, row[f"le_{b}"]) for b in LATENCY_BUCKETS_MS],
            count=row["count"],
            sum_ms=row["total"] or 0,
        )
        for row in rows
    ]


def delivery_latency(*, since: datetime) -> list[Histogram]:
    """Export delivery attempts since ``since``: duration by outcome (``ok`` True/False)."""
    return _histograms(ExportAttempt.objects.filter(started_at__gte=since), field="duration_ms", labels={"ok": "ok"})


def integration_latency(*, since: datetime) -> list[Histogram]:
    """Runtime integration calls since ``since``: duration by kind and outcome."""
    return _histograms(
        IntegrationCall.objects.filter(created_at__gte=since), field="duration_ms", labels={"kind": "kind", "ok": "ok"}
    )


# --- The dashboard -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FailureCount:
    account: str
    source: str  # queue name or import kind
    status: str
    count: int
    last_at: datetime | None


def export_failures(*, since: datetime) -> list[FailureCount]:
    """Deliveries that failed for good since ``since``, by account and queue."""
    rows = (
        ExportDelivery.objects.filter(status=ExportStatus.FAILURE, finished_at__gte=since)
        .order_by()
        .values("account__identifier", "queue__name")
        .annotate(n=Count("id"), last=Max("finished_at"))
        .order_by("-n")
    )
    return [
        FailureCount(r["account__identifier"], r["queue__name"], ExportStatus.FAILURE, r["n"], r["last"]) for r in rows
    ]


def failed_export_attempts(*, since: datetime) -> int:
    return ExportAttempt.objects.filter(started_at__gte=since, ok=False).count()


def import_failures(*, since: datetime) -> list[FailureCount]:
    """Import items that failed when materialised or were rejected since ``since``, by account and kind."""
    rows = (
        ImportItem.objects.filter(status__in=[ImportStatus.FAILURE, ImportStatus.REJECTED], created_at__gte=since)
        .order_by()
        .values("account__identifier", "kind", "status")
        .annotate(n=Count("id"), last=Max("created_at"))
        .order_by("-n")
    )
    return [FailureCount(r["account__identifier"], r["kind"], r["status"], r["n"], r["last"]) for r in rows]


@dataclass(frozen=True)
class IntegrationLatency:
    kind: str
    calls: int
    failures: int
    p95_ms: int
    max_ms: int


def slowest_integrations(*, since: datetime, fraction: float = 0.95) -> list[IntegrationLatency]:
    """Runtime integration kinds by their p95 call duration since ``since``, slowest first.

    The percentile is the nearest-rank one, read with one indexed ``OFFSET`` query per kind (a handful), so it is
    the same on SQLite and PostgreSQL and never loads the call log into memory.
    """
    calls = IntegrationCall.objects.filter(created_at__gte=since).order_by()
    summary = calls.values("kind").annotate(
        n=Count("id"), failures=Count("id", filter=Q(ok=False)), top=Max("duration_ms")
    )
    out = []
    for row in summary:
        rank = max(1, math.ceil(fraction * row["n"]))
        p95 = calls.filter(kind=row["kind"]).order_by("duration_ms").values_list("duration_ms", flat=True)[rank - 1]
        out.append(IntegrationLatency(row["kind"], row["n"], row["failures"], p95, row["top"]))
    return sorted(out, key=lambda item: item.p95_ms, reverse=True)
