"""Deliveries taken up again: the sweeper (lost hand-offs, due retries, leases of stopped processes), retries
requested by staff, and the cron windows that gather a queue's items into one delivery."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Account
from core import liveness
from core.errors import Conflict
from exports import trail
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus, Trigger
from exports.services import attempts, enqueueing

logger = logging.getLogger(__name__)


def sweep(*, grace: timedelta | None = None) -> int:
    """Hand over deliveries that are due, not being sent and not handed over lately: first attempts whose
    hand-off was lost, retries whose time has come, leases that ran out (the task's process was killed; the
    lease outlives its hard time limit). Each is handed over again only once its last hand-off is older than
    the grace period, and with one task per export queue, so that a backlog does not fill the broker with
    duplicate tasks. Returns the number of deliveries handed over."""
    if grace is None:
        grace = timedelta(seconds=settings.EXPORT_SWEEP_GRACE_SECONDS)
    now = timezone.now()
    taken_over = _release_dead_leases(now)
    due = (
        ExportDelivery.objects.filter(status=ExportStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        .filter(handed_off_at__lte=now - grace)
        .order_by("next_attempt_at")
        .values_list("pk", "queue_id", "window")[:10_000]
    )
    rows = list(due)
    if not rows and not taken_over:
        return 0
    pks = [pk for pk, _, _ in rows]
    for start in range(0, len(pks), attempts.STREAM_PAGE):
        ExportDelivery.objects.filter(pk__in=pks[start : start + attempts.STREAM_PAGE]).update(handed_off_at=now)
    realtime: dict[int, list[int]] = {}
    cron: dict[int, list[int]] = {}
    for pk, queue_id, window in [*taken_over, *rows]:
        (cron if window else realtime).setdefault(queue_id, []).append(pk)
    if cron:
        enqueueing.hand_off(cron, cron=True)
    if realtime:
        enqueueing.hand_off(realtime)
    return len(rows) + len(taken_over)


def _release_dead_leases(now: datetime) -> list[tuple[int, int, str]]:
    """Release the leases whose owner stopped proving it is alive (``core.liveness``: killed mid-send, out of
    memory), real-time deliveries and cron windows alike, without waiting for ``lease_until``: they are due again
    at once and handed over by this sweep. The attempt the lease counted stays counted (it may have reached the
    receiver, which then gets the delivery again under the same delivery id). Returns (pk, queue, window) of each."""
    leased = ExportDelivery.objects.filter(status=ExportStatus.PENDING, lease_until__gt=now).exclude(lease_owner="")
    dead = liveness.dead(leased.order_by().values_list("lease_owner", flat=True).distinct())
    if not dead:
        return []
    rows = list(leased.filter(lease_owner__in=dead).values_list("pk", "queue_id", "window")[:10_000])
    released = leased.filter(pk__in=[pk for pk, _, _ in rows], lease_owner__in=dead)
    released.update(lease_until=None, lease_owner="", handed_off_at=now)
    logger.warning(
        "export deliveries: %d leases of stopped processes (%s) taken over", len(rows), ", ".join(sorted(dead))
    )
    return rows


def retry_items(*, account: Account, items: Sequence[ExportItem], action: str = "retried") -> int:
    """Send these items again (a failed one, a selection, a replay of a delivered one) in new deliveries.

    Each re-send is a new delivery with a new delivery id: a replay is meant to arrive again. One audit entry
    for the call, ``action`` (``replayed`` for a replay of a time window) naming the queues and the items.
    """
    if any(item.status == ExportStatus.PENDING for item in items):
        raise Conflict("a pending item can be retried once it has an outcome", field="status", code="pending")
    now = timezone.now()
    deliveries: list[ExportDelivery] = []
    with transaction.atomic():
        for item in items:
            if item.account_id != account.pk:
                raise ValueError("the item belongs to another account")
            delivery = ExportDelivery.objects.create(
                account=account, queue_id=item.queue_id, delivery_id=enqueueing.new_delivery_id(), next_attempt_at=now
            )
            ExportItem.objects.filter(pk=item.pk).update(delivery=delivery, status=ExportStatus.PENDING, message="")
            deliveries.append(delivery)
        trail.record_sent_again(account=account, items=items, action=action)
        transaction.on_commit(partial(enqueueing.hand_off, enqueueing.grouped_by_queue(deliveries)))
    return len(deliveries)


def cron_window(queue: ExportQueue, now: datetime) -> str | None:
    """The window a cron queue is due for at ``now``, or None (daily before its time; real time)."""
    local = now.astimezone(ZoneInfo(queue.account.timezone or "UTC"))
    if queue.trigger == Trigger.HOURLY:
        return local.strftime("%Y-%m-%dT%H")
    if queue.trigger == Trigger.DAILY:
        if queue.daily_at is not None and local.time() < queue.daily_at:
            return None
        return local.strftime("%Y-%m-%d")
    return None


def run_cron(*, now: datetime | None = None) -> int:
    """Spec: Events, Triggers (Cron). For each due cron queue, one delivery per window with every item
    queued so far. Exactly once per window: the (queue, window) pair is unique in the database."""
    now = now or timezone.now()
    started: dict[int, list[int]] = {}
    queues = ExportQueue.objects.filter(enabled=True, trigger__in=[Trigger.HOURLY, Trigger.DAILY]).select_related(
        "account"
    )
    for queue in queues:
        window = cron_window(queue, now)
        if window is None or ExportDelivery.objects.filter(queue=queue, window=window).exists():
            continue
        try:
            with transaction.atomic():
                waiting = ExportItem.objects.filter(queue=queue, delivery__isnull=True, status=ExportStatus.PENDING)
                if not waiting.exists():
                    continue
                delivery = ExportDelivery.objects.create(
                    account_id=queue.account_id,
                    queue=queue,
                    delivery_id=enqueueing.new_delivery_id(),
                    window=window,
                    next_attempt_at=now,
                )
                waiting.update(delivery=delivery)
        except IntegrityError:  # another beat tick took this window first
            continue
        started[queue.pk] = [delivery.pk]
    enqueueing.hand_off(started, cron=True)
    return len(started)
