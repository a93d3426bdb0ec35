"""Deleting old log rows without holding long locks: the helper every app's retention service uses
(docs/operations.md, Retention)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Model, QuerySet


def cutoff(*, days: int, now: datetime) -> datetime | None:
    """The moment before which a log older than ``days`` goes, or None when ``days`` is 0 (kept for ever)."""
    return now - timedelta(days=days) if days > 0 else None


def delete_in_batches(queryset: QuerySet[Model], *, batch: int | None = None) -> Counter[str]:
    """Delete every row of ``queryset``, ``batch`` primary keys per statement, each batch in a transaction
    of its own: a short lock each time, and a crash loses only the current batch's progress.

    The queryset's conditions are applied again at deletion, so a row that changed in between (an item retried
    back to pending) is left alone. Returns the rows deleted per model label, rows removed by cascade included.
    """
    size = batch or settings.RETENTION_BATCH_SIZE
    deleted: Counter[str] = Counter()
    while True:
        ids = list(queryset.order_by("pk").values_list("pk", flat=True)[:size])
        if not ids:
            break
        with transaction.atomic():
            total, per_model = queryset.filter(pk__in=ids).delete()
        deleted.update(per_model)
        if len(ids) < size or total == 0:
            break
    return deleted
