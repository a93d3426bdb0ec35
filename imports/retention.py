"""Retention of the import log: the items posted to /imports/, never what they created.

An item of any outcome (success, failure, rejected) goes ``RETENTION_IMPORT_DAYS`` (default 30) after it was
posted; a pending one, not yet materialised, is never deleted. The orders and campaigns it created are kept.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from accounts.retention import cutoff, delete_in_batches
from imports.models import ImportItem, ImportStatus


def prune_import_logs(*, now: datetime | None = None, days: int | None = None, batch: int | None = None) -> int:
    """Delete import items past their period, in batches; returns how many.

    Runs every day from beat (``imports.tasks.prune_import_logs``).
    """
    before = cutoff(days=settings.RETENTION_IMPORT_DAYS if days is None else days, now=now or timezone.now())
    if before is None:
        return 0
    # (status, created_at) is indexed: this is a range scan, whatever the size of the log.
    items = ImportItem.objects.exclude(status=ImportStatus.PENDING).filter(created_at__lt=before)
    return delete_in_batches(items, batch=batch)[ImportItem._meta.label]
