"""Rows of the export and integration logs, written directly (as the ops pages and metrics only read them):
a sales queue to a web hook, its items, deliveries and attempts, and integration calls."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from accounts.models import Account
from core.outbox import EntityType
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from integrations.models import IntegrationCall


def make_sales_queue(account: Account, name: str = "hooks") -> ExportQueue:
    return ExportQueue.objects.create(
        account=account,
        name=name,
        entity_type=EntityType.SALES,
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )


def make_item(queue: ExportQueue, *, status: str = ExportStatus.PENDING, age: timedelta | None = None) -> ExportItem:
    item = ExportItem.objects.create(
        account=queue.account, queue=queue, entity_type=queue.entity_type, object_id=1, element_key="k", status=status
    )
    if age is not None:
        ExportItem.objects.filter(pk=item.pk).update(created_at=timezone.now() - age)
    return item


def make_delivery(
    queue: ExportQueue, *, status: str = ExportStatus.SUCCESS, finished_at: datetime | None = None
) -> ExportDelivery:
    now = timezone.now()
    return ExportDelivery.objects.create(
        account=queue.account,
        queue=queue,
        delivery_id=f"d-{ExportDelivery.objects.count()}-{queue.pk}",
        status=status,
        next_attempt_at=now,
        finished_at=finished_at or now,
    )


def make_attempt(delivery: ExportDelivery, *, number: int = 1, ok: bool = True, duration_ms: int = 40) -> ExportAttempt:
    return ExportAttempt.objects.create(
        account=delivery.account,
        delivery=delivery,
        number=number,
        ok=ok,
        duration_ms=duration_ms,
        started_at=timezone.now(),
    )


def make_call(account: Account, *, kind: str = "product_search", ok: bool = True, duration_ms: int = 100) -> None:
    IntegrationCall.objects.create(account=account, kind=kind, ok=ok, duration_ms=duration_ms)
