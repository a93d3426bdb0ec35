"""Replaying the exports of a time window for one queue: disaster recovery for an integrator who lost data
(docs/operations.md, Replay).

What is replayed is the queue's export items created in the window, so exactly what was exported (the same
entities, in their current form, through the queue's current transform and delivery) arrives again, with new
delivery ids so receivers do not drop it as a repeat. Items still pending are left alone: they are on their way.
A real-time queue gets one new delivery per item (``services.retry_items``), as the spec wants one element per
real-time delivery; a cron queue gets one new file per batch, as its integrator expects files, not a file per
entity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from exports import services, trail
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus, Trigger
from exports.services import enqueueing

REPLAY_BATCH = 500


@dataclass(frozen=True)
class ReplayResult:
    matched: int  # items of the queue created in the window
    pending: int  # of which still pending, left alone
    replayed: int  # items put into new deliveries (0 in a dry run)
    deliveries: int  # new deliveries (0 in a dry run)


def replay(
    *,
    account: Account,
    queue: ExportQueue,
    start: datetime,
    end: datetime,
    dry_run: bool = False,
    batch: int = REPLAY_BATCH,
) -> ReplayResult:
    """Send again every export item of ``queue`` created in [start, end), in batches, each
    batch in its own transaction (a crash midway leaves whole batches replayed, and a second run replays again)."""
    if queue.account_id != account.pk:
        raise ValueError("the queue belongs to another account")
    window = ExportItem.objects.filter(account=account, queue=queue, created_at__gte=start, created_at__lt=end)
    matched = window.count()
    pending = window.filter(status=ExportStatus.PENDING).count()
    if dry_run:
        return ReplayResult(matched=matched, pending=pending, replayed=0, deliveries=0)
    ready = window.exclude(status=ExportStatus.PENDING).order_by("pk")
    replayed = deliveries = 0
    last = 0
    while True:
        items = list(ready.filter(pk__gt=last)[:batch])
        if not items:
            break
        last = items[-1].pk  # replayed items turn pending, so paging goes by primary key, not by status
        if queue.trigger == Trigger.REALTIME:
            deliveries += services.retry_items(account=account, items=items, action="replayed")
        else:
            _replay_as_file(account=account, queue=queue, items=items)
            deliveries += 1
        replayed += len(items)
    return ReplayResult(matched=matched, pending=pending, replayed=replayed, deliveries=deliveries)


def _replay_as_file(*, account: Account, queue: ExportQueue, items: list[ExportItem]) -> None:
    """One new cron delivery carrying these items: a window name of its own (never a real window's), so the
    (queue, window) uniqueness that keeps cron runs exactly-once is untouched."""
    with transaction.atomic():
        delivery = ExportDelivery.objects.create(
            account=account,
            queue=queue,
            delivery_id=services.new_delivery_id(),
            window=f"replay-{services.new_delivery_id()[4:20]}",
            next_attempt_at=timezone.now(),
        )
        # Only items still final: one retried meanwhile (pending again) stays with its own delivery.
        ExportItem.objects.filter(pk__in=[i.pk for i in items]).exclude(status=ExportStatus.PENDING).update(
            delivery=delivery, status=ExportStatus.PENDING, message=""
        )
        trail.record_sent_again(account=account, items=items, action="replayed")
        transaction.on_commit(partial(enqueueing.hand_off, {queue.pk: [delivery.pk]}, cron=True))
