"""Retention of the export log: items, deliveries and attempts, never the entities.

What goes, and when (settings ``RETENTION_SUCCESS_DAYS``, default 14, and ``RETENTION_FAILURE_DAYS``, default 90):
- an export item that succeeded or was skipped, counted from the end of its delivery; one that failed, likewise
  after the failure period. A pending item, and so an item whose delivery still runs or retries, is never deleted;
- a delivery once it is final (not pending), its period over and no item left in it, with its attempts: a
  delivery and its attempts are one log entry, kept as long as its outcome says. A delivery whose items were
  retried elsewhere goes by its own outcome.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts.retention import cutoff, delete_in_batches
from exports.models import ExportDelivery, ExportItem, ExportStatus

SUCCEEDED = (ExportStatus.SUCCESS, ExportStatus.SKIPPED)
FAILED = (ExportStatus.FAILURE,)


def prune_export_logs(
    *,
    now: datetime | None = None,
    success_days: int | None = None,
    failure_days: int | None = None,
    batch: int | None = None,
) -> dict[str, int]:
    """Delete export log rows past their period, in batches.

    Runs every day from beat (``exports.tasks.prune_export_logs``). Returns what was deleted per kind of row.
    """
    now = now or timezone.now()
    periods = (
        (SUCCEEDED, settings.RETENTION_SUCCESS_DAYS if success_days is None else success_days),
        (FAILED, settings.RETENTION_FAILURE_DAYS if failure_days is None else failure_days),
    )
    counts = {"items": 0, "deliveries": 0, "attempts": 0}
    for statuses, days in periods:
        before = cutoff(days=days, now=now)
        if before is None:
            continue
        # An item without a delivery (it was deleted with its queue's history) is aged by its creation.
        items = ExportItem.objects.filter(status__in=statuses).filter(
            Q(delivery__finished_at__lt=before) | Q(delivery__isnull=True, created_at__lt=before)
        )
        counts["items"] += delete_in_batches(items, batch=batch)[ExportItem._meta.label]
        deliveries = ExportDelivery.objects.filter(status__in=statuses, finished_at__lt=before).filter(
            ~Exists(ExportItem.objects.filter(delivery=OuterRef("pk")))
        )
        deleted = delete_in_batches(deliveries, batch=batch)
        counts["deliveries"] += deleted[ExportDelivery._meta.label]
        counts["attempts"] += deleted["exports.ExportAttempt"]
    return counts
