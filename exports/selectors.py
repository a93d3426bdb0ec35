"""Export reads: queues and the export log. Every function takes the account first."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from accounts.models import Account
from exports.models import ExportItem, ExportQueue, ExportStatus


def export_queues(*, account: Account) -> QuerySet[ExportQueue]:
    """The account's export queues, by name."""
    return ExportQueue.objects.filter(account=account).select_related("account").order_by("name", "id")


def export_items(
    *,
    account: Account,
    queue: int | None = None,
    status: str | None = None,
    entity_type: str | None = None,
    element_key: str | None = None,
    with_attempts: bool = False,
) -> QuerySet[ExportItem]:
    """The export log of the account: every export item with its delivery, newest first.

    ``with_attempts`` prefetches the attempt log of each item's delivery (a detail view).
    """
    queryset = ExportItem.objects.filter(account=account).select_related("queue", "delivery")
    if queue is not None:
        queryset = queryset.filter(queue_id=queue)
    if status:
        queryset = queryset.filter(status=status)
    if entity_type:
        queryset = queryset.filter(entity_type=entity_type)
    if element_key:
        queryset = queryset.filter(element_key=element_key)
    if with_attempts:
        queryset = queryset.prefetch_related("delivery__attempt_log")
    return queryset.order_by("-id")


def retryable_items(
    *, account: Account, queue: ExportQueue, ids: Sequence[int] | None = None, limit: int
) -> list[ExportItem]:
    """Items of a queue that a bulk retry re-sends: the failed ones, or those named by id (a replay).

    Pending items are never included: they are still on their way (or waiting for their cron window).
    """
    queryset = ExportItem.objects.filter(account=account, queue=queue).exclude(status=ExportStatus.PENDING)
    queryset = queryset.filter(pk__in=ids) if ids is not None else queryset.filter(status=ExportStatus.FAILURE)
    return list(queryset.order_by("id")[:limit])
