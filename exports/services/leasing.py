"""The bounds on sending and the leases taken within them: a queue's concurrency (its own, else
EXPORT_QUEUE_CONCURRENCY) and, for real-time sends, an account's share of the worker processes (``account_cap``)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from enum import Enum

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account
from core import liveness
from exports.models import ExportDelivery, ExportQueue, ExportStatus


def queue_concurrency(queue: ExportQueue) -> int:
    """The queue's bound of deliveries sent at once, across every worker: its own, else EXPORT_QUEUE_CONCURRENCY."""
    return int(queue.concurrency or settings.EXPORT_QUEUE_CONCURRENCY)


# How long a process trusts its count of live worker processes (the account cap's base).
_LIVE_WORKERS_SECONDS = 5.0
_live_workers: dict[str, float] = {}


def account_cap() -> int:
    """Worker processes one account may occupy with real-time sends at once: EXPORT_ACCOUNT_WORKERS when set,
    else max(1, floor(EXPORT_ACCOUNT_SHARE x live worker processes)); the processes ``core.liveness`` sees alive
    (WORKER_CONCURRENCY while none is seen: a test, a shell). Read at most every few seconds per process."""
    if settings.EXPORT_ACCOUNT_WORKERS > 0:
        return int(settings.EXPORT_ACCOUNT_WORKERS)
    now = time.monotonic()
    if _live_workers.get("until", 0.0) <= now:
        _live_workers["count"] = float(len(liveness.live(kind=liveness.WORKER)) or settings.WORKER_CONCURRENCY)
        _live_workers["until"] = now + _LIVE_WORKERS_SECONDS
    return max(1, int(settings.EXPORT_ACCOUNT_SHARE * _live_workers["count"]))


def at_cap(
    queue_ids: Sequence[int], *, cron: bool = False, bounds: Mapping[int, tuple[int, int | None]] | None = None
) -> set[int]:
    """Those of the queues whose every place is taken (EXPORT_QUEUE_CONCURRENCY or their own bound of live leases
    held by live processes), and for real-time ones, those whose account occupies its share of the worker
    processes already (``account_cap``): one look at the leases for all of them (a checkout hands off to its sales'
    and its stock events' queues at once)."""
    if bounds is None:
        bounds = {pk: (account_id, bound) for pk, account_id, bound in _queue_bounds(queue_ids)}
    queues = {pk: bounds[pk] for pk in queue_ids if pk in bounds}
    if not queues:
        return set()
    now = timezone.now()
    accounts = {account_id for account_id, _ in queues.values()}
    leased = ExportDelivery.objects.filter(status=ExportStatus.PENDING, lease_until__gt=now)
    leased = leased.filter(Q(queue_id__in=list(queues)) | Q(account_id__in=accounts, window=""))
    rows = list(leased.values_list("queue_id", "account_id", "lease_owner", "window", "pk"))
    dead = liveness.dead(owner for _, _, owner, _, _ in rows)
    per_queue: dict[int, int] = {}
    owners: dict[int, set[str]] = {}
    for queue_id, account_id, owner, window, _pk in rows:
        if owner in dead:
            continue
        per_queue[queue_id] = per_queue.get(queue_id, 0) + 1
        if not window:
            owners.setdefault(account_id, set()).add(owner)
    skip = {
        pk for pk, (_, bound) in queues.items() if per_queue.get(pk, 0) >= (bound or settings.EXPORT_QUEUE_CONCURRENCY)
    }
    if cron:
        return skip
    # An account gets at most as many real-time tasks as it has free places in its share: each sender takes the
    # account's queues in turn, and a task beyond the share would only occupy a worker process to find it taken.
    cap = account_cap()
    places = {account_id: cap - len(owners.get(account_id, ())) for account_id in accounts}
    for pk, (account_id, _) in sorted(queues.items()):
        if pk in skip:
            continue
        if places[account_id] <= 0:
            skip.add(pk)
        places[account_id] -= 1
    return skip


def _queue_bounds(queue_ids: Sequence[int]) -> list[tuple[int, int, int | None]]:
    return list(ExportQueue.objects.filter(pk__in=queue_ids).values_list("pk", "account_id", "concurrency"))


class Busy(Enum):
    """Why no lease was taken: nothing of the queue is due, the queue is at its concurrency cap, or its account
    occupies its share of the worker processes with other senders."""

    NOTHING_DUE = "nothing due"
    AT_CAP = "at cap"
    ACCOUNT_AT_CAP = "account at cap"


def take_leases(
    *, queue_id: int, preferred: Sequence[int], drain: bool, cron: bool, want: int, owner: str
) -> list[ExportDelivery] | Busy:
    """Lease up to ``want`` due deliveries of this queue for ``owner`` (this process, ``liveness.identity``):
    ``preferred`` ones first, then (``drain``) the queue's longest-waiting ones. Never more than the queue's free
    places (its bound less the live leases of live processes), and for real-time deliveries only while ``owner``
    is within its account's share of the worker processes (``account_cap``): the account's senders, by name, the
    first ``account_cap()`` of them go on; a later one takes nothing (the ones before it take the account's queues
    in turn). Each lease counts an attempt and names its owner.

    Taken under row locks (PostgreSQL: the account's row, then the queue's, SELECT ... FOR NO KEY UPDATE; SQLite:
    every write transaction is IMMEDIATE, so they run one at a time), so two workers cannot both take the last free
    place, or both join an account at its cap.
    """
    now = timezone.now()
    of_queue = ExportDelivery.objects.filter(queue_id=queue_id, status=ExportStatus.PENDING)
    due = of_queue.filter(next_attempt_at__lte=now).filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
    due = due.exclude(window="") if cron else due.filter(window="")
    if not due.exists():  # no lock for nothing: a delivery committed after this look is handed off on commit
        return Busy.NOTHING_DUE
    if not cron and _beyond_share(queue_id=queue_id, owner=owner, now=now):
        return Busy.ACCOUNT_AT_CAP  # a first look without locks; the decision to lease is taken under them
    with transaction.atomic():
        row = (
            ExportQueue.objects.select_for_update(no_key=True)
            .filter(pk=queue_id)
            .values_list("account_id", "concurrency")
            .first()
        )
        if row is None:
            return Busy.NOTHING_DUE
        account_id, bound = row
        if cron:
            holders = list(of_queue.filter(lease_until__gt=now).values_list("queue_id", "lease_owner"))
        else:
            # The account's row next (always in this order: a queue's, then its account's), so that its senders
            # are counted one at a time: its live real-time leases tell both its senders and this queue's places.
            list(Account.objects.select_for_update(no_key=True).filter(pk=account_id).values_list("pk", flat=True))
            holders = list(
                ExportDelivery.objects.filter(
                    account_id=account_id, status=ExportStatus.PENDING, lease_until__gt=now, window=""
                ).values_list("queue_id", "lease_owner")
            )
        dead = liveness.dead(owner for _, owner in holders)
        holders = [(queue, owner) for queue, owner in holders if owner not in dead]
        if not cron:
            senders = {owner for _, owner in holders}
            if senders - {owner} and sorted(senders | {owner}).index(owner) >= account_cap():
                return Busy.ACCOUNT_AT_CAP
        free = (bound or settings.EXPORT_QUEUE_CONCURRENCY) - sum(1 for queue, _ in holders if queue == queue_id)
        if free <= 0:
            return Busy.AT_CAP
        want = min(want, free)
        pks = list(
            due.filter(pk__in=list(preferred)).order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:want]
        )
        if len(pks) < want and drain:
            more = due.exclude(pk__in=pks).order_by("next_attempt_at", "pk").values_list("pk", flat=True)
            pks += list(more[: want - len(pks)])
        if not pks:
            return Busy.NOTHING_DUE
        lease_until = now + timedelta(seconds=settings.EXPORT_LEASE_SECONDS)
        due.filter(pk__in=pks).update(attempts=F("attempts") + 1, lease_until=lease_until, lease_owner=owner)
    taken = ExportDelivery.objects.select_related("queue__account", "account").filter(pk__in=pks)
    return sorted(taken, key=lambda d: (d.next_attempt_at, d.pk))


def _beyond_share(*, queue_id: int, owner: str, now: datetime) -> bool:
    """Would ``owner`` exceed the share of the queue's account (``take_leases``' rule), by its leases as they are
    now? Read without locks, a first look only: a task of an account at its share ends at once,
    without queueing for the row locks that its account's sender needs."""
    leases = ExportDelivery.objects.filter(
        account_id=ExportQueue.objects.filter(pk=queue_id).values("account_id")[:1],
        status=ExportStatus.PENDING,
        lease_until__gt=now,
        window="",
    )
    senders = set(leases.exclude(lease_owner=owner).order_by().values_list("lease_owner", flat=True).distinct())
    if not senders:
        return False
    senders -= liveness.dead(senders)
    return bool(senders) and sorted(senders | {owner}).index(owner) >= account_cap()


def due_queues(*, account_id: int, now: datetime) -> list[int]:
    """The account's queues with real-time deliveries due and not leased (what its sender takes in turn)."""
    due = ExportDelivery.objects.filter(
        account_id=account_id, status=ExportStatus.PENDING, next_attempt_at__lte=now, window=""
    ).filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
    return sorted(due.order_by().values_list("queue_id", flat=True).distinct())
