"""Exports: the outbox, delivery, retries, the sweeper and cron windows (spec: Events, Errors 4, Limits).

``enqueue`` is the only way an entity enters exports. It runs inside the transaction that creates the
entity and writes one export item per enabled matching queue (and, for real-time queues, the delivery
that will carry it), so a rolled-back entity exports nothing and a crash after commit loses nothing:
the sweeper hands over every delivery still pending a grace period after its last hand-off. A delivery
task works on one export queue: it leases each delivery just before its send (at most
EXPORT_QUEUE_CONCURRENCY of one queue at a time), under Celery time limits shorter than the lease; a worker
killed mid-delivery leaves the lease to run out and the delivery to be taken up again. Receivers drop
repeats by the delivery id every delivery carries.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import secrets
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from functools import partial
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django import db
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q, TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.models import Account, StockLocation
from accounts.services import within_account_limit
from core import bulk, liveness, outbound, outbox
from core.errors import Conflict, ServiceError
from core.jsonenc import DecimalJSONDecoder
from exports import circuit, retry, trail
from exports.deliveries import REGISTRY as DELIVERIES
from exports.deliveries.base import DeliveryResult, short_answer, short_sent
from exports.entities import REGISTRY as ENTITIES
from exports.entities.base import EntityDefinition
from exports.models import (
    EntityType,
    ExportAttempt,
    ExportDelivery,
    ExportItem,
    ExportQueue,
    ExportStatus,
    Trigger,
)
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import ConfigError, Element, RenderContext, TransformError

logger = logging.getLogger(__name__)


# One entity offered to exports (``core.outbox``): its row, its element key, where it happened.
ExportEntry = outbox.Entry


def new_delivery_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


# --- The outbox ------------------------------------------------------------------------------------------


def enqueue(
    *,
    account: Account,
    entity_type: str | None = None,
    entries: Sequence[ExportEntry] = (),
    offers: Mapping[str, Sequence[ExportEntry]] | None = None,
    configuration: str | None = None,
) -> int:
    """Spec: Events. Put entities into every enabled queue of their type that accepts them: ``entries`` of
    ``entity_type``, or ``offers`` (entity type -> entries) for several types at once, whose queues are read in one
    query and whose rows are written in one insert per table (a checkout's queries do not grow with its types).

    ``configuration``: the account's enabled queues as ``queues_read_along`` read them in this transaction (None:
    read them here). Must be called inside the transaction that creates the entities. Returns the number of items
    written.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("exports.services.enqueue must run inside the transaction that creates the entity")
    offered = {**(offers or {}), **({entity_type: entries} if entity_type is not None else {})}
    offered = {kind: of_kind for kind, of_kind in offered.items() if of_kind}
    if not offered:
        return 0
    if configuration is None:
        queues = list(ExportQueue.objects.filter(account=account, entity_type__in=list(offered), enabled=True))
    else:
        queues = [queue for queue in _queues_read(account, configuration) if queue.entity_type in offered]
    if not queues:
        return 0
    now = timezone.now()
    every_entry = [entry for of_kind in offered.values() for entry in of_kind]
    markets = _markets_of(every_entry) if any(q.filters.get("markets") for q in queues) else {}
    items: list[ExportItem] = []
    deliveries: list[ExportDelivery] = []
    for queue in queues:
        accepts = _filter(queue, markets)
        for entry in offered.get(queue.entity_type, ()):
            if not accepts(entry):
                continue
            item = ExportItem(
                account=account,
                queue=queue,
                entity_type=queue.entity_type,
                object_id=entry.object_id,
                element_key=entry.element_key[:255],
            )
            if queue.trigger == Trigger.REALTIME:
                item.delivery = ExportDelivery(
                    account=account, queue=queue, delivery_id=new_delivery_id(), next_attempt_at=now
                )
                deliveries.append(item.delivery)
            items.append(item)
    # One statement on PostgreSQL (each item takes its new delivery's primary key in it); two on SQLite.
    bulk.insert_together(deliveries, items)
    if deliveries:
        by_queue = _by_queue(deliveries)
        bounds = {queue.pk: (account.pk, queue.concurrency) for queue in queues if queue.pk in by_queue}
        transaction.on_commit(partial(hand_off, by_queue, bounds=bounds))
    return len(items)


def offered(*, account: Account, offers: Mapping[str, Sequence[ExportEntry]], configuration: Any = None) -> int:
    """The outbox's sink (``core.outbox.offer``, registered in ``ExportsConfig.ready``): ``enqueue``, looked up
    when called."""
    return enqueue(account=account, offers=offers, configuration=configuration)


# What enqueue needs of a queue, read along with another query (core.outbox.read_along).
_READ_ALONG = {
    "postgresql": (
        "(SELECT COALESCE(json_agg(json_build_object('id', q.id, 'entity_type', q.entity_type, "
        "'trigger', q.\"trigger\", 'filters', q.filters, 'concurrency', q.concurrency) ORDER BY q.name, q.id), "
        "'[]')::text "
        "FROM {table} q WHERE q.account_id = %s AND q.enabled)"
    ),
    "sqlite": (
        "(SELECT json_group_array(json_object('id', q.id, 'entity_type', q.entity_type, "
        "'trigger', q.\"trigger\", 'filters', json(q.filters), 'concurrency', q.concurrency)) "
        "FROM (SELECT * FROM {table} WHERE account_id = %s AND enabled ORDER BY name, id) q)"
    ),
}


def queues_read_along(*, account: Account) -> RawSQL:
    """Spec: Events. The account's enabled export queues, as much of each as ``enqueue`` uses, as one JSON text
    column of a query the caller runs anyway (``core.outbox.read_along``: a checkout's lock of its register
    period), so that a checkout pays no query of its own for them."""
    sql = _READ_ALONG[connection.vendor].format(table=connection.ops.quote_name(ExportQueue._meta.db_table))
    return RawSQL(sql, [account.pk], output_field=TextField())  # noqa: S611 - the only parameter is bound


def _queues_read(account: Account, configuration: str) -> list[ExportQueue]:
    return [
        ExportQueue(
            pk=queue["id"],
            account=account,
            entity_type=queue["entity_type"],
            trigger=queue["trigger"],
            filters=queue["filters"] or {},
            concurrency=queue.get("concurrency"),
        )
        for queue in json.loads(configuration, cls=DecimalJSONDecoder)
    ]


def _markets_of(entries: Sequence[ExportEntry]) -> dict[int, str]:
    ids = {e.stock_location_id for e in entries if e.stock_location_id is not None}
    return dict(StockLocation.objects.filter(pk__in=ids).values_list("pk", "market__identifier"))


def _filter(queue: ExportQueue, markets: dict[int, str]) -> Any:
    """The queue's filters as a predicate: by stock location, by market, and stock event types to ignore."""
    filters = queue.filters or {}
    locations = set(filters.get("stock_locations") or [])
    location_ids = (
        set(
            StockLocation.objects.filter(account_id=queue.account_id, identifier__in=locations).values_list(
                "pk", flat=True
            )
        )
        if locations
        else set()
    )
    wanted_markets = set(filters.get("markets") or [])
    ignored_types = set(filters.get("ignore_stock_event_types") or [])

    def accepts(entry: ExportEntry) -> bool:
        if locations and entry.stock_location_id not in location_ids:
            return False
        if wanted_markets and markets.get(entry.stock_location_id or 0) not in wanted_markets:
            return False
        return not (entry.stock_event_type and entry.stock_event_type in ignored_types)

    return accepts


# The delivery tasks (exports.tasks), found by these names in Celery's registry: the tasks call the services and
# the services name the tasks, so the two modules form no import cycle (CELERY_TASK_ROUTES routes by them too).
DELIVER_TASK = "exports.tasks.deliver"
DELIVER_CRON_TASK = "exports.tasks.deliver_cron"


def hand_off(
    by_queue: Mapping[int, Sequence[int]],
    countdown: float | None = None,
    *,
    cron: bool = False,
    bounds: Mapping[int, tuple[int, int | None]] | None = None,
) -> None:
    """After commit: give deliveries to Celery, one task per export queue (the task sends that queue's due
    deliveries, these first). A failure here only delays them: the sweeper hands over what is still pending once
    its ``handed_off_at`` is older than the grace period. Cron windows go by a task of their own, routed to the
    cron queue, so that a big file never waits in front of real-time web hooks (settings: TASK_ROUTING).
    ``bounds``: each queue's account and own concurrency when the caller has them (``enqueue``), else read."""
    task = current_app.tasks[DELIVER_CRON_TASK if cron else DELIVER_TASK]
    at_cap = _at_cap(list(by_queue), cron=cron, bounds=bounds) if countdown is None else set()
    for queue_id, delivery_ids in by_queue.items():
        if queue_id in at_cap:
            # Every place of the queue, or of its account, is taken by a sender that, after its sends, leases the
            # queue's (or the account's) next due deliveries, these included (they were committed before): a task
            # for them would only find the cap, and behind a dead receiver such tasks would crowd the broker in
            # front of other queues' work.
            continue
        try:
            task.apply_async((queue_id, list(delivery_ids)[:HAND_OFF_IDS]), countdown=countdown)
        except Exception:  # the broker may be down; the deliveries are safe in the database
            logger.warning("hand-off of export queue %s failed; the sweeper will retry", queue_id, exc_info=True)
            return


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


def _at_cap(
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


def _by_queue(deliveries: Iterable[ExportDelivery]) -> dict[int, list[int]]:
    grouped: dict[int, list[int]] = {}
    for delivery in deliveries:
        grouped.setdefault(delivery.queue_id, []).append(delivery.pk)
    return grouped


# --- Delivering ------------------------------------------------------------------------------------------

# Delivery ids named in one task (it sends these first, then its queue's other due deliveries).
HAND_OFF_IDS = 100


class _Busy(Enum):
    """Why no lease was taken: nothing of the queue is due, the queue is at its concurrency cap, or its account
    occupies its share of the worker processes with other senders."""

    NOTHING_DUE = "nothing due"
    AT_CAP = "at cap"
    ACCOUNT_AT_CAP = "account at cap"


def _take_leases(
    *, queue_id: int, preferred: Sequence[int], drain: bool, cron: bool, want: int, owner: str
) -> list[ExportDelivery] | _Busy:
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
        return _Busy.NOTHING_DUE
    if not cron and _beyond_share(queue_id=queue_id, owner=owner, now=now):
        return _Busy.ACCOUNT_AT_CAP  # a first look without locks; the decision to lease is taken under them
    with transaction.atomic():
        row = (
            ExportQueue.objects.select_for_update(no_key=True)
            .filter(pk=queue_id)
            .values_list("account_id", "concurrency")
            .first()
        )
        if row is None:
            return _Busy.NOTHING_DUE
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
                return _Busy.ACCOUNT_AT_CAP
        free = (bound or settings.EXPORT_QUEUE_CONCURRENCY) - sum(1 for queue, _ in holders if queue == queue_id)
        if free <= 0:
            return _Busy.AT_CAP
        want = min(want, free)
        pks = list(
            due.filter(pk__in=list(preferred)).order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:want]
        )
        if len(pks) < want and drain:
            more = due.exclude(pk__in=pks).order_by("next_attempt_at", "pk").values_list("pk", flat=True)
            pks += list(more[: want - len(pks)])
        if not pks:
            return _Busy.NOTHING_DUE
        lease_until = now + timedelta(seconds=settings.EXPORT_LEASE_SECONDS)
        due.filter(pk__in=pks).update(attempts=F("attempts") + 1, lease_until=lease_until, lease_owner=owner)
    taken = ExportDelivery.objects.select_related("queue__account", "account").filter(pk__in=pks)
    return sorted(taken, key=lambda d: (d.next_attempt_at, d.pk))


def _beyond_share(*, queue_id: int, owner: str, now: datetime) -> bool:
    """Would ``owner`` exceed the share of the queue's account (``_take_leases``' rule), by its leases as they are
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


def _due_queues(*, account_id: int, now: datetime) -> list[int]:
    """The account's queues with real-time deliveries due and not leased (what its sender takes in turn)."""
    due = ExportDelivery.objects.filter(
        account_id=account_id, status=ExportStatus.PENDING, next_attempt_at__lte=now, window=""
    ).filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
    return sorted(due.order_by().values_list("queue_id", flat=True).distinct())


def render_context(queue: ExportQueue, delivery_id: str, now: datetime | None = None) -> RenderContext:
    return RenderContext(
        queue={"id": queue.pk, "name": queue.name, "entity_type": queue.entity_type, "trigger": queue.trigger},
        account={"identifier": queue.account.identifier, "name": queue.account.name},
        now=now or timezone.now(),
        delivery_id=delivery_id,
    )


def _load_entities(items: Sequence[ExportItem]) -> dict[tuple[str, int], dict[str, Any]]:
    """The JSON form of every item's entity: one query per entity type."""
    wanted: dict[str, set[int]] = {}
    for item in items:
        wanted.setdefault(item.entity_type, set()).add(item.object_id)
    return {
        (entity_type, object_id): entity
        for entity_type, ids in wanted.items()
        for object_id, entity in ENTITIES[entity_type].load(ids).items()
    }


def elements_of(
    queue: ExportQueue,
    items: Sequence[ExportItem],
    entities: dict[tuple[str, int], dict[str, Any]] | None = None,
) -> tuple[list[Element], dict[int, str]]:
    """The items' entities in their JSON form, and the reasons of those the transform skips."""
    if entities is None:
        entities = _load_entities(items)
    transform = TRANSFORMS[queue.transform.get("type", "identity")]
    elements: list[Element] = []
    skipped: dict[int, str] = {}
    for item in items:
        entity = entities.get((item.entity_type, item.object_id))
        if entity is None:
            skipped[item.pk] = "the entity no longer exists"
            continue
        element = Element(element_key=item.element_key, entity=entity)
        reason = transform.skip_reason(element, queue.transform)
        if reason:
            skipped[item.pk] = reason
        else:
            elements.append(element)
    return elements, skipped


@dataclass
class _Outcome:
    delivery: ExportDelivery
    items: list[ExportItem] | None  # None: a streamed cron batch, whose items are updated by delivery
    result: DeliveryResult
    status: str
    skipped: dict[int, str]
    started: datetime
    duration_ms: int
    retry_in: timedelta | None = None
    paused: bool = False  # not sent: the destination's breaker is open (``exports.circuit``); not an attempt
    out_of_time: bool = False  # the task's soft time limit cut this send off: the task stops after recording it


def deliver(*, delivery_pk: int) -> str | None:
    """This one delivery, if it is due and nobody sends it (see ``deliver_queue``). Returns the status it
    reached, or None when it was not due, another worker has it, or its queue is at its concurrency cap."""
    row = ExportDelivery.objects.filter(pk=delivery_pk).values_list("queue_id", "window").first()
    if row is None:
        return None
    queue_id, window = row
    return deliver_queue(queue_id=queue_id, delivery_pks=[delivery_pk], cron=bool(window), drain=False).get(delivery_pk)


def deliver_queue(
    *,
    queue_id: int,
    delivery_pks: Sequence[int] = (),
    cron: bool = False,
    drain: bool = True,
    seconds: float | None = None,
) -> dict[int, str]:
    """Spec: Events (trigger, transformation, delivery; outcome and retry). Send one export queue's due
    deliveries, several at once (real-time ones, or with ``cron`` its cron windows): ``delivery_pks`` first, then
    (``drain``) the queue's others, oldest first, then (real time) the account's other queues' due deliveries in
    turn. Returns the status each sent delivery reached.

    This thread takes the leases (``_take_leases``: within the queue's bound and the account's share) and records
    the outcomes, in batches; up to EXPORT_SEND_THREADS renders and sends run in threads of this process (one after
    another in this thread when the caller is inside a transaction: other connections could not see its rows).
    ``seconds`` (default EXPORT_TASK_SOFT_TIME_LIMIT) is the task's time: each send gets at most what is left of
    it, and before a send could not fit any more the rest of the queue goes to a new task. A soft time limit
    reached gives the sends under way a margin to finish, then records the rest as timeouts (retry rule) and
    releases their leases.
    """
    queue = ExportQueue.objects.select_related("account").filter(pk=queue_id).first()
    if queue is None:
        return {}
    sender = _Sender(queue=queue, preferred=[pk for pk in delivery_pks if pk], cron=cron, drain=drain, seconds=seconds)
    return sender.run()


# Seconds a delivery task keeps, past its last send, to record the outcome and hand over the rest of its queue.
RECORD_MARGIN_SECONDS = 5.0
# After a send finishes, the task waits up to this long for more (until half its threads are free) before it
# records them and leases their successors: fewer, larger transactions on a busy queue.
GATHER_SECONDS = 0.1


@dataclass
class _Job:
    """A leased delivery being sent: what recording its outcome needs if the send never reports back."""

    delivery: ExportDelivery
    items: list[ExportItem] | None
    started: datetime
    clock: float


_pool_state: dict[str, Any] = {}
_pool_lock = threading.Lock()


def _send_pool() -> ThreadPoolExecutor:
    """This process's send threads (EXPORT_SEND_THREADS), made on first use: a forked worker child makes its own."""
    size = int(settings.EXPORT_SEND_THREADS)
    with _pool_lock:
        if _pool_state.get("pid") != os.getpid() or _pool_state.get("size") != size:
            _pool_state.update(
                pid=os.getpid(), size=size, pool=ThreadPoolExecutor(max_workers=size, thread_name_prefix="export-send")
            )
        pool: ThreadPoolExecutor = _pool_state["pool"]
        return pool


def _in_thread(job: _Job, timeout: float, entities: dict[tuple[str, int], dict[str, Any]]) -> _Outcome:
    """One send in a send thread; the thread's database connection (the breaker's reads, a cron window's pages)
    is closed after it, so that idle threads hold none."""
    try:
        return _send_one(job.delivery, timeout=timeout, items=job.items, entities=entities)
    finally:
        db.connections.close_all()


# A sender's leasing or recording taking longer than this is logged (the database's locks were slow to come).
SLOW_STEP_SECONDS = 0.5


def _note_slow(step: str, queue_id: int, clock: float) -> None:
    took = time.monotonic() - clock
    if took > SLOW_STEP_SECONDS:
        logger.warning("export queue %s: %s took %.2f s", queue_id, step, took)


class _Sender:
    """The loop of one delivery task: leases in batches, sends in threads, outcomes recorded as they come."""

    def __init__(
        self, *, queue: ExportQueue, preferred: list[int], cron: bool, drain: bool, seconds: float | None
    ) -> None:
        self.limit = settings.EXPORT_TASK_SOFT_TIME_LIMIT if seconds is None else seconds
        self.started = time.monotonic()
        self.margin = min(RECORD_MARGIN_SECONDS, self.limit * 0.2)  # kept to record outcomes and hand over the rest
        self.first_queue = queue
        self.queue = queue
        self.preferred = preferred
        self.cron, self.drain = cron, drain
        self.owner = liveness.identity()
        # The account's other real-time queues are taken in turn, one batch each: only if it has others.
        self.rotate = (
            not cron
            and drain
            and ExportQueue.objects.filter(account_id=queue.account_id, trigger=Trigger.REALTIME, enabled=True)
            .exclude(pk=queue.pk)
            .exists()
        )
        # Threads only outside a transaction: a caller's uncommitted rows are invisible to other connections.
        self.threaded = settings.EXPORT_SEND_THREADS > 1 and not transaction.get_connection().in_atomic_block
        self.width = int(settings.EXPORT_SEND_THREADS) if self.threaded else 1
        self.in_flight: dict[Future[_Outcome], _Job] = {}
        self.statuses: dict[int, str] = {}
        self.stopping = False  # no more leases: out of time, or the account is beyond its share
        self.hand_over = False  # the rest of the first queue goes to a new task
        self.yielded = False  # stopped because the account's first senders by name occupy its share
        self.looked_at = 0  # sends recorded when it last tried again after yielding

    def left(self) -> float:
        return self.limit - (time.monotonic() - self.started) - self.margin

    def need(self, queue: ExportQueue) -> float:
        kind = DELIVERIES.get(queue.delivery.get("type", ""))
        return kind.time_budget(queue.delivery) if kind is not None else 0.0  # a send's time with its own timeouts

    def run(self) -> dict[int, str]:
        done: list[_Outcome] = []
        try:
            while True:
                self.top_up()
                if not self.in_flight:
                    if self.look_again():
                        continue
                    break
                done = [self.collect(future) for future in self.gather()]
                self.record(done)
                done = []
        except SoftTimeLimitExceeded:
            logger.warning(
                "export queue %s: soft time limit reached with %d sends under way", self.queue.pk, len(self.in_flight)
            )
            self.at_soft_limit(done)
        if self.hand_over and self.drain:  # the rest of the queue, by a task with a whole time limit of its own
            hand_off({self.first_queue.pk: self.preferred}, cron=self.cron)
        return self.statuses

    def look_again(self) -> bool:
        """A sender that yielded after sending, once its sends are recorded, tries its account's due deliveries
        once more. The senders it yielded to may have found nothing due and ended just before a delivery
        committed whose commit-time hand-off saw this sender's leases and so left it to the account's senders:
        without this look it would wait for the sweeper. The last of an account's senders to clear its leases
        makes this look (the first by name never yields and looks after every batch)."""
        if not self.yielded or len(self.statuses) == self.looked_at:
            return False
        self.looked_at = len(self.statuses)
        self.stopping = self.yielded = False
        return True

    def gather(self) -> set[Future[_Outcome]]:
        """The sends that finished: the first, and those that finish within GATHER_SECONDS after it until half
        the threads are free, so that one transaction records several and one leases their successors."""
        finished, running = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
        until = time.monotonic() + GATHER_SECONDS
        while running and len(finished) < self.width // 2:
            left = until - time.monotonic()
            if left <= 0:
                break
            more, running = wait(running, timeout=left, return_when=FIRST_COMPLETED)
            finished |= more
        return finished

    def top_up(self) -> None:
        """Lease and start sends while places are free: this queue's, then the account's other queues in turn."""
        tried: set[int] = set()
        while not self.stopping and len(self.in_flight) < self.width:
            left, need = self.left(), self.need(self.queue)
            busy = bool(self.statuses or self.in_flight)
            if left <= 0 or (busy and left < need):
                self.stopping = self.hand_over = True
                return
            want = 1 if left < need else self.width - len(self.in_flight)
            clock = time.monotonic()
            taken = _take_leases(
                queue_id=self.queue.pk,
                preferred=self.preferred if self.queue.pk == self.first_queue.pk else (),
                drain=self.drain,
                cron=self.cron,
                want=want,
                owner=self.owner,
            )
            _note_slow("leasing", self.queue.pk, clock)
            if taken == _Busy.ACCOUNT_AT_CAP:
                self.stopping = self.yielded = True  # the account's senders before this one take its queues in turn
                return
            if isinstance(taken, _Busy):
                tried.add(self.queue.pk)
                if not self.next_queue(tried):
                    return
                continue
            self.start(taken, timeout=left)
            if self.rotate:
                self.next_queue(set())  # the account's queues in turn, one batch each

    def next_queue(self, tried: set[int]) -> bool:
        """Move on to the account's next real-time queue with due deliveries (after this one, round the list)."""
        if not self.rotate:
            return False
        due = [pk for pk in _due_queues(account_id=self.queue.account_id, now=timezone.now()) if pk not in tried]
        if not due:
            return False
        after = [pk for pk in due if pk > self.queue.pk]
        pk = (after or due)[0]
        if pk != self.queue.pk:
            queue = ExportQueue.objects.filter(pk=pk).first()
            if queue is None:
                return False
            self.queue = queue
        return True

    def start(self, leased: list[ExportDelivery], *, timeout: float) -> None:
        realtime = [d for d in leased if not d.window]
        items_of: dict[int, list[ExportItem]] = {d.pk: [] for d in realtime}
        for item in ExportItem.objects.filter(delivery_id__in=list(items_of)).order_by("id"):
            assert item.delivery_id is not None
            items_of[item.delivery_id].append(item)
        entities = _load_entities([item for items in items_of.values() for item in items]) if realtime else {}
        for delivery in leased:
            job = _Job(delivery, items_of.get(delivery.pk), timezone.now(), time.monotonic())
            future: Future[_Outcome]
            if self.threaded:
                future = _send_pool().submit(_in_thread, job, timeout, entities)
            else:
                future = Future()
                future.set_result(_send_one(delivery, timeout=timeout, items=job.items, entities=entities))
            self.in_flight[future] = job

    def collect(self, future: Future[_Outcome]) -> _Outcome:
        job = self.in_flight.pop(future)
        try:
            return future.result()
        except BaseException as exc:  # the thread's own failure: recorded like a send that raised
            result = _not_sent(job.delivery, exc) if isinstance(exc, Exception) else None
            if result is None:
                return _timed_out(job.delivery, job.items, {}, job.started, job.clock)
            return _outcome(job.delivery, job.items, result, {}, job.started, job.clock)

    def record(self, outcomes: list[_Outcome]) -> None:
        if not outcomes:
            return
        clock = time.monotonic()
        _record(outcomes)
        _note_slow("recording", self.queue.pk, clock)
        for outcome in outcomes:
            self.statuses[outcome.delivery.pk] = outcome.status
            if outcome.out_of_time:
                self.stopping = self.hand_over = True
        sent = {outcome.delivery.pk for outcome in outcomes}
        self.preferred = [pk for pk in self.preferred if pk not in sent]

    def at_soft_limit(self, unrecorded: list[_Outcome]) -> None:
        """The soft time limit, raised in this thread: the sends under way get the margin to finish; what has not
        finished by then is recorded as a timeout (its lease released); then the rest is handed over."""
        self.stopping = self.hand_over = True
        outcomes = list(unrecorded)
        try:
            finished, _ = wait(list(self.in_flight), timeout=self.margin / 2)
            outcomes += [self.collect(future) for future in finished]
            for job in list(self.in_flight.values()):
                outcomes.append(_timed_out(job.delivery, job.items, {}, job.started, job.clock))
            self.in_flight.clear()
            # Only what is still leased by this task: the limit may have come just after a batch was recorded.
            still = set(
                ExportDelivery.objects.filter(
                    pk__in=[o.delivery.pk for o in outcomes], status=ExportStatus.PENDING, lease_until__isnull=False
                ).values_list("pk", flat=True)
            )
            self.record([o for o in outcomes if o.delivery.pk in still])
        except SoftTimeLimitExceeded:  # pragma: no cover - raised once per task by Celery
            logger.warning("export queue %s: outcomes not recorded at the soft limit", self.queue.pk)


def _send_one(
    delivery: ExportDelivery,
    *,
    timeout: float,
    items: list[ExportItem] | None = None,
    entities: dict[tuple[str, int], dict[str, Any]] | None = None,
) -> _Outcome:
    """One leased delivery: a real-time one with its items and entities (read here unless given), or a cron
    window streamed."""
    if delivery.window:
        return _send_streamed(delivery, timeout=timeout)
    if items is None:
        items = list(ExportItem.objects.filter(delivery=delivery).order_by("id"))
    return _send(delivery, items, entities if entities is not None else _load_entities(items), timeout=timeout)


def _send(
    delivery: ExportDelivery,
    items: list[ExportItem],
    entities: dict[tuple[str, int], dict[str, Any]],
    *,
    timeout: float | None = None,
) -> _Outcome:
    queue = delivery.queue
    started = timezone.now()
    skipped: dict[int, str] = {}

    def send() -> DeliveryResult | _Outcome:
        elements, skipped_now = elements_of(queue, items, entities)
        skipped.update(skipped_now)
        if not elements:
            return _Outcome(delivery, items, DeliveryResult(ok=True), ExportStatus.SKIPPED, skipped, started, 0)
        context = render_context(queue, delivery.delivery_id, started)
        rendered = TRANSFORMS[queue.transform.get("type", "identity")].render(elements, context, queue.transform)
        return circuit.deliver(
            rendered, queue=queue, delivery_id=delivery.delivery_id, context=context, timeout=timeout
        )

    return _attempt(delivery, items, skipped, started, send)


def _attempt(
    delivery: ExportDelivery,
    items: list[ExportItem] | None,
    skipped: dict[int, str],
    started: datetime,
    send: Callable[[], DeliveryResult | _Outcome],
) -> _Outcome:
    """Run ``send`` (render and deliver, or decide there is nothing to send) as the delivery's attempt: what it
    raises is recorded too (the task's soft time limit as a timeout, anything else as a failure)."""
    clock = time.monotonic()
    try:
        result = send()
    except SoftTimeLimitExceeded:
        return _timed_out(delivery, items, skipped, started, clock)
    except Exception as exc:  # a bug must not strand the delivery: it is logged and recorded as failed
        result = _not_sent(delivery, exc)
    if isinstance(result, _Outcome):
        return result
    return _outcome(delivery, items, result, skipped, started, clock)


def _not_sent(delivery: ExportDelivery, exc: Exception) -> DeliveryResult:
    """The failed attempt of a send that raised: a transform or configuration error (its message), or a bug
    (logged with its traceback, recorded by its type only)."""
    if isinstance(exc, TransformError | ConfigError | KeyError):
        return DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    logger.exception("export delivery %s failed", delivery.delivery_id)
    return DeliveryResult(ok=False, error=f"internal error: {type(exc).__name__}")


# The error of an attempt cut off by the delivery task's soft time limit: a timeout, under the spec's retry rule.
TIME_LIMIT_ERROR = "timeout: the delivery task's time limit was reached"


def _timed_out(
    delivery: ExportDelivery, items: list[ExportItem] | None, skipped: dict[int, str], started: datetime, clock: float
) -> _Outcome:
    result = DeliveryResult(ok=False, error=TIME_LIMIT_ERROR, retryable=True)
    outcome = _outcome(delivery, items, result, skipped, started, clock)
    outcome.out_of_time = True
    return outcome


def _outcome(
    delivery: ExportDelivery,
    items: list[ExportItem] | None,
    result: DeliveryResult,
    skipped: dict[int, str],
    started: datetime,
    clock: float,
) -> _Outcome:
    queue = delivery.queue
    duration_ms = int((time.monotonic() - clock) * 1000)
    if result.ok:
        return _Outcome(delivery, items, result, ExportStatus.SUCCESS, skipped, started, duration_ms)
    if result.paused_until is not None:
        wait = max(result.paused_until - timezone.now(), timedelta(0))
        return _Outcome(delivery, items, result, ExportStatus.PENDING, skipped, started, duration_ms, wait, True)
    retry_in = retry.retry_delay(
        trigger=queue.trigger,
        delivery_type=queue.delivery.get("type", ""),
        retryable=result.retryable,
        attempts=delivery.attempts,
        base_delay=settings.EXPORT_RETRY_BASE_DELAY,
    )
    status = ExportStatus.PENDING if retry_in is not None else ExportStatus.FAILURE
    return _Outcome(delivery, items, result, status, skipped, started, duration_ms, retry_in)


# Items of a cron batch are read and loaded this many at a time.
STREAM_PAGE = 1000
# A streamed render stays in memory up to this size, then moves to a temporary file.
STREAM_SPOOL_BYTES = 8 * 1024 * 1024


def _stream_elements(delivery: ExportDelivery, skipped: dict[int, str], sent: list[int]) -> Iterator[Element]:
    """The delivery's elements in item order, loaded a page at a time; skip reasons land in ``skipped``
    and ``sent[0]`` counts the elements handed to the transform."""
    queue = delivery.queue
    transform = TRANSFORMS[queue.transform.get("type", "identity")]
    reads = transform.reads(queue.transform)
    last = 0
    while True:
        page = list(
            ExportItem.objects.filter(delivery=delivery, pk__gt=last)
            .order_by("pk")
            .values_list("pk", "entity_type", "object_id", "element_key")[:STREAM_PAGE]
        )
        if not page:
            return
        last = page[-1][0]
        wanted: dict[str, list[int]] = {}
        for _pk, entity_type, object_id, _key in page:
            wanted.setdefault(entity_type, []).append(object_id)
        loaded = {
            (entity_type, object_id): entity
            for entity_type, ids in wanted.items()
            for object_id, entity in _load_read(ENTITIES[entity_type], ids, reads).items()
        }
        for pk, entity_type, object_id, key in page:
            entity = loaded.get((entity_type, object_id))
            if entity is None:
                skipped[pk] = "the entity no longer exists"
                continue
            element = Element(element_key=key, entity=entity)
            reason = transform.skip_reason(element, queue.transform)
            if reason:
                skipped[pk] = reason
                continue
            sent[0] += 1
            yield element


def _load_read(
    definition: EntityDefinition, object_ids: list[int], reads: list[tuple[str | int, ...]] | None
) -> dict[int, dict[str, Any]]:
    """The entities, reduced to the values the transform ``reads`` where the entity type can load just those."""
    if reads is None or definition.load_paths is None:
        return definition.load(object_ids)
    return definition.load_paths(object_ids, reads)


def _send_streamed(delivery: ExportDelivery, *, timeout: float | None = None) -> _Outcome:
    """A cron window's batch: entities read in pages, rendered into a spooled temporary file, uploaded from
    it, so memory stays flat whatever the batch size (for the streaming transforms: identity and CSV)."""
    queue = delivery.queue
    started = timezone.now()
    skipped: dict[int, str] = {}
    sent = [0]

    def send() -> DeliveryResult | _Outcome:
        waiting = circuit.paused(queue)  # asked before the file is rendered: it may be large
        if waiting is not None:
            return waiting
        with tempfile.SpooledTemporaryFile(max_size=STREAM_SPOOL_BYTES) as out:
            context = render_context(queue, delivery.delivery_id, started)
            transform = TRANSFORMS[queue.transform.get("type", "identity")]
            rendered = transform.render_to(_stream_elements(delivery, skipped, sent), context, queue.transform, out)
            if not sent[0]:
                return _Outcome(delivery, None, DeliveryResult(ok=True), ExportStatus.SKIPPED, skipped, started, 0)
            return circuit.deliver(
                rendered, queue=queue, delivery_id=delivery.delivery_id, context=context, timeout=timeout
            )

    return _attempt(delivery, None, skipped, started, send)


def _record(outcomes: Sequence[_Outcome]) -> None:
    """Every outcome in one transaction: attempts, deliveries, items; retries handed back after commit."""
    now = timezone.now()
    with transaction.atomic():
        ExportAttempt.objects.bulk_create(
            [
                ExportAttempt(
                    account_id=o.delivery.account_id,
                    delivery=o.delivery,
                    number=o.delivery.attempts,
                    ok=o.result.ok,
                    status_code=o.result.status_code,
                    error=o.result.error[:2000],
                    duration_ms=o.duration_ms,
                    started_at=o.started,
                    sent=short_sent(o.result.sent),
                    answer=short_answer(o.result.answer),
                )
                for o in outcomes
                if not o.paused
            ]
        )
        for o in outcomes:
            d = o.delivery
            d.lease_owner = ""
            if o.paused:
                circuit.pause(d, o.result)
                continue
            d.paused_until, d.pause_reason = None, ""
            d.status, d.status_code, d.error, d.duration_ms = (
                o.status,
                o.result.status_code,
                o.result.error[:2000],
                o.duration_ms,
            )
            d.lease_until = None
            if o.retry_in is not None:
                d.next_attempt_at = now + o.retry_in
                if _handed_back(o):
                    d.handed_off_at = d.next_attempt_at  # its task runs then: the sweeper leaves it until
            else:
                d.finished_at = now
        ExportDelivery.objects.bulk_update(
            [o.delivery for o in outcomes],
            [
                "status",
                "status_code",
                "error",
                "duration_ms",
                "lease_until",
                "lease_owner",
                "next_attempt_at",
                "finished_at",
                "paused_until",
                "pause_reason",
                "handed_off_at",
            ],
        )
        circuit.give_back_attempts(o.delivery.pk for o in outcomes if o.paused)
        by_status: dict[tuple[str, str], list[int]] = {}
        for o in outcomes:
            if o.status == ExportStatus.PENDING:
                continue  # a retry: its items stay pending
            item_status = ExportStatus.SUCCESS if o.status == ExportStatus.SKIPPED else o.status
            key = (item_status, o.result.error[:2000])
            if o.items is None:  # a streamed batch: all its items at once, the skipped ones below
                ExportItem.objects.filter(delivery=o.delivery).update(status=item_status, message=key[1])
            else:
                by_status.setdefault(key, []).extend(i.pk for i in o.items if i.pk not in o.skipped)
            for pk, reason in o.skipped.items():
                by_status.setdefault((ExportStatus.SKIPPED, reason), []).append(pk)
        for (status, message), ids in by_status.items():
            for start in range(0, len(ids), STREAM_PAGE):
                chunk = ids[start : start + STREAM_PAGE]
                ExportItem.objects.filter(pk__in=chunk).update(status=status, message=message)
        circuit.note_outcomes((o.delivery.queue, o.result) for o in outcomes if o.status != ExportStatus.SKIPPED)
        for o in outcomes:
            if _handed_back(o):
                assert o.retry_in is not None
                transaction.on_commit(
                    partial(
                        hand_off,
                        {o.delivery.queue_id: [o.delivery.pk]},
                        o.retry_in.total_seconds(),
                        cron=bool(o.delivery.window),
                    )
                )


def _handed_back(outcome: _Outcome) -> bool:
    """The database holds the retry time; a short countdown only saves waiting for the sweeper."""
    return outcome.retry_in is not None and outcome.retry_in.total_seconds() <= 60


# --- Sweeper, retries requested by staff, cron windows -------------------------------------------------


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
    for start in range(0, len(pks), STREAM_PAGE):
        ExportDelivery.objects.filter(pk__in=pks[start : start + STREAM_PAGE]).update(handed_off_at=now)
    realtime: dict[int, list[int]] = {}
    cron: dict[int, list[int]] = {}
    for pk, queue_id, window in [*taken_over, *rows]:
        (cron if window else realtime).setdefault(queue_id, []).append(pk)
    if cron:
        hand_off(cron, cron=True)
    if realtime:
        hand_off(realtime)
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
                account=account, queue_id=item.queue_id, delivery_id=new_delivery_id(), next_attempt_at=now
            )
            ExportItem.objects.filter(pk=item.pk).update(delivery=delivery, status=ExportStatus.PENDING, message="")
            deliveries.append(delivery)
        trail.record_sent_again(account=account, items=items, action=action)
        transaction.on_commit(partial(hand_off, _by_queue(deliveries)))
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
                    delivery_id=new_delivery_id(),
                    window=window,
                    next_attempt_at=now,
                )
                waiting.update(delivery=delivery)
        except IntegrityError:  # another beat tick took this window first
            continue
        started[queue.pk] = [delivery.pk]
    hand_off(started, cron=True)
    return len(started)


# --- Queue configuration (admin and REST API) ------------------------------------------------------------

FILTER_KEYS = ("stock_locations", "markets", "ignore_stock_event_types")


def validate_queue(*, entity_type: str, trigger: str, transform: Any, delivery: Any, filters: Any = None) -> None:
    """Refuse a configuration that cannot work, naming the field (``transform.template``, ``delivery.url``)."""
    if entity_type not in EntityType.values:
        raise ServiceError(f"unknown entity type '{entity_type}'", field="entity_type")
    if trigger not in Trigger.values:
        raise ServiceError(f"unknown trigger '{trigger}'", field="trigger")
    registries: tuple[tuple[str, Any, dict[str, Any]], ...] = (
        ("transform", transform, TRANSFORMS),
        ("delivery", delivery, DELIVERIES),
    )
    for name, config, registry in registries:
        if not isinstance(config, dict):
            raise ServiceError("must be an object with a type", field=name)
        kind = config.get("type")
        if not isinstance(kind, str) or kind not in registry:
            raise ServiceError(f"type must be one of {', '.join(sorted(registry))}", field=f"{name}.type")
        try:
            registry[kind].validate(config)
        except ConfigError as exc:
            raise ServiceError(exc.message, field=f"{name}.{exc.field}") from None
    if filters is None:
        return
    if not isinstance(filters, dict):
        raise ServiceError("must be an object", field="filters")
    for key, value in filters.items():
        if key not in FILTER_KEYS:
            raise ServiceError(f"unknown filter; use {', '.join(FILTER_KEYS)}", field=f"filters.{key}")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ServiceError("must be a list of strings", field=f"filters.{key}")


def validate_concurrency(concurrency: Any) -> None:
    """A queue's own bound of deliveries sent at once: empty (the service's default) or 1..the operator's maximum."""
    if concurrency is None:
        return
    top = int(settings.EXPORT_QUEUE_CONCURRENCY_MAX)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= top:
        raise ServiceError(f"must be a whole number from 1 to {top}, or null for the default", field="concurrency")


def _with_secret(delivery: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A web hook without a secret gets a new one, returned to be shown once."""
    if delivery.get("type") != "webhook" or delivery.get("secret"):
        return delivery, None
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    return {**delivery, "secret": secret}, secret


def create_queue(*, account: Account, **fields: Any) -> tuple[ExportQueue, str | None]:
    """A new export queue (at most ``EXPORT_QUEUES_PER_ACCOUNT`` per account). Returns it and, for a web hook
    without a secret, the generated secret."""
    validate_queue(
        entity_type=fields.get("entity_type", ""),
        trigger=fields.get("trigger", Trigger.REALTIME),
        transform=fields.get("transform", {"type": "identity"}),
        delivery=fields.get("delivery"),
        filters=fields.get("filters"),
    )
    validate_concurrency(fields.get("concurrency"))
    fields["delivery"], secret = _with_secret(fields["delivery"])
    fields.setdefault("transform", {"type": "identity"})
    fields.setdefault("filters", {})
    limit: int = settings.EXPORT_QUEUES_PER_ACCOUNT
    try:
        with (
            within_account_limit(account=account, model=ExportQueue, limit=limit, field="name", what="export queues"),
            transaction.atomic(),
        ):
            queue = ExportQueue.objects.create(account=account, **fields)
            trail.record_queue(account=account, queue=queue, before=None)
    except IntegrityError:
        raise ServiceError("a queue with this name exists", field="name", code="duplicate") from None
    return queue, secret


def queue_limit_reached(*, account: Account) -> Conflict | None:
    """The refusal ``create_queue`` would raise for one more queue of ``account`` (a form shows it on its field),
    or None while the account is under ``EXPORT_QUEUES_PER_ACCOUNT``."""
    try:
        with within_account_limit(
            account=account,
            model=ExportQueue,
            limit=settings.EXPORT_QUEUES_PER_ACCOUNT,
            field="name",
            what="export queues",
        ):
            return None
    except Conflict as exc:
        return exc


def update_queue(*, account: Account, queue: ExportQueue, **fields: Any) -> tuple[ExportQueue, str | None]:
    """Change a queue; a web hook secret left out keeps the stored one."""
    if queue.account_id != account.pk:
        raise ServiceError("the queue belongs to another account", field="queue")
    if "delivery" in fields and fields["delivery"].get("type") == "webhook" and "secret" not in fields["delivery"]:
        stored = queue.delivery.get("secret") if queue.delivery.get("type") == "webhook" else None
        if stored:
            fields["delivery"] = {**fields["delivery"], "secret": stored}
    merged = {
        "entity_type": queue.entity_type,
        "trigger": queue.trigger,
        "transform": queue.transform,
        "delivery": queue.delivery,
        "filters": queue.filters,
        **fields,
    }
    validate_queue(**{key: merged[key] for key in ("entity_type", "trigger", "transform", "delivery", "filters")})
    validate_concurrency(fields.get("concurrency"))
    secret = None
    if "delivery" in fields:
        fields["delivery"], secret = _with_secret(fields["delivery"])
    switched_on = fields.get("enabled") is True and not queue.enabled
    before = trail.queue_fields(queue)
    for name, value in fields.items():
        setattr(queue, name, value)
    saved = list(fields)
    if switched_on:  # as the enable action: the disable's reason cleared, the destination's breaker closed
        saved += [name for name in circuit.reopened(queue) if name not in saved]
    try:
        with transaction.atomic():
            queue.save(update_fields=[*saved, "updated_at"])
            trail.record_queue(account=account, queue=queue, before=before)
    except IntegrityError:
        raise ServiceError("a queue with this name exists", field="name", code="duplicate") from None
    if switched_on:
        circuit.close_breaker(queue)
    return queue, secret


def delete_queue(*, account: Account, queue: ExportQueue) -> None:
    """Remove a queue with its export log and deliveries (the entities themselves stay)."""
    if queue.account_id != account.pk:
        raise ServiceError("the queue belongs to another account", field="queue")
    with transaction.atomic():
        trail.record_queue(account=account, queue=queue, before=None, action="deleted")
        queue.delete()


def preview_config(
    *, account: Account, entity_type: str, transform: Any, object_id: int | None = None
) -> tuple[Any, str]:
    """Preview a transform configuration before it is saved: validated like a queue's, rendered like
    ``preview`` on a stored entity of ``entity_type``."""
    if entity_type not in EntityType.values:
        raise ServiceError(f"unknown entity type '{entity_type}'", field="entity_type")
    if not isinstance(transform, dict) or transform.get("type") not in TRANSFORMS:
        raise ServiceError(f"type must be one of {', '.join(sorted(TRANSFORMS))}", field="transform.type")
    try:
        TRANSFORMS[transform["type"]].validate(transform)
    except ConfigError as exc:
        raise ServiceError(exc.message, field=f"transform.{exc.field}") from None
    unsaved = ExportQueue(account=account, name="preview", entity_type=entity_type, transform=transform)
    return preview(queue=unsaved, object_id=object_id)


def preview(*, queue: ExportQueue, object_id: int | None = None) -> tuple[Any, str]:
    """Render the queue's transform on a stored entity of its type and account (the newest, or ``object_id``),
    delivering nothing. Returns (Rendered, element key); ServiceError when there is nothing to preview."""
    entity = ENTITIES.get(queue.entity_type)
    found = entity.find(queue.account_id, object_id) if entity is not None else None
    if entity is None or found is None:
        raise ServiceError("no stored entity of this type to preview", field="object_id")
    found_id, element_key = found
    loaded = entity.load([found_id])
    if found_id not in loaded:
        raise ServiceError("the entity no longer exists", field="object_id")
    element = Element(element_key=element_key, entity=loaded[found_id])
    try:
        rendered = TRANSFORMS[queue.transform.get("type", "identity")].render(
            [element], render_context(queue, "preview"), queue.transform
        )
    except (TransformError, ConfigError) as exc:
        raise ServiceError(str(exc), field="transform") from None
    return rendered, element_key


TEST_DELIVERY_PREFIX = "test_"


def send_test_delivery(*, queue: ExportQueue, object_id: int | None = None) -> tuple[DeliveryResult, str, str]:
    """Staff's "Send a test delivery": the queue's transform rendered on a stored entity of its type (the newest,
    or ``object_id``) and sent once through the queue's real delivery module, with a delivery id starting
    ``test_`` (a receiver can tell a test from an export). Writes no export item, delivery or attempt, so the
    export log and its counts stay the record of real exports. Returns (what the destination answered, the
    element key sent, the delivery id); ServiceError when there is nothing to render."""
    rendered, element_key = preview(queue=queue, object_id=object_id)
    delivery_id = TEST_DELIVERY_PREFIX + uuid.uuid4().hex
    delivery = DELIVERIES.get(queue.delivery.get("type", ""))
    if delivery is None:
        raise ServiceError("the queue has no known delivery type", field="delivery.type")
    try:
        result = delivery.deliver(
            rendered, config=queue.delivery, delivery_id=delivery_id, context=render_context(queue, delivery_id)
        )
    except (TransformError, ConfigError, KeyError) as exc:
        result = DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    except Exception as exc:  # as in ``_send``: a bug is logged and reported, never shown as a crash to staff
        logger.exception("test delivery %s failed", delivery_id)
        result = DeliveryResult(ok=False, error=f"internal error: {type(exc).__name__}")
    return result, element_key, delivery_id


@dataclass(frozen=True)
class SentTest:
    """What one test send of a configuration gave: the destination's answer, the element key sent, the delivery
    id (``test_...``) and how long the send took."""

    result: DeliveryResult
    element_key: str
    delivery_id: str
    duration_ms: int


def send_test_config(
    *,
    account: Account,
    queue: ExportQueue,
    entity_type: str,
    transform: dict[str, Any],
    delivery: dict[str, Any],
    object_id: int | None = None,
) -> SentTest:
    """``send_test_delivery`` of ``queue`` with a configuration not saved yet (a form's, validated): its entity
    type, transform and delivery. A web hook's secret left out is the stored one, as ``update_queue`` keeps it,
    else a new one for this send only. Nothing is saved."""
    if queue.account_id != account.pk:
        raise ServiceError("the queue belongs to another account", field="queue")
    if delivery.get("type") == "webhook" and not delivery.get("secret"):
        stored = queue.delivery.get("secret") if queue.delivery.get("type") == "webhook" else None
        delivery = {**delivery, "secret": stored} if stored else _with_secret(delivery)[0]
    unsaved = ExportQueue(
        pk=queue.pk,
        account=account,
        name=queue.name,
        entity_type=entity_type,
        trigger=queue.trigger,
        transform=transform,
        delivery=delivery,
    )
    started = time.monotonic()
    result, element_key, delivery_id = send_test_delivery(queue=unsaved, object_id=object_id)
    return SentTest(result, element_key, delivery_id, round((time.monotonic() - started) * 1000))


def destination_warning(*, delivery: Any) -> str | None:
    """Why the outbound guard (``core.outbound``) would refuse this delivery's destination today, or None.

    Checked when staff save a queue, so that a destination the guard refuses is named then and not first by a
    failed delivery. Only a warning: the same configuration is valid through the API, name resolution may
    differ by the time of delivery, and the operator may widen ``OUTBOUND_ALLOWED_NETWORKS`` later. E-mail goes
    through the operator's relay and is never checked."""
    found = _destination_check(delivery)
    return found[1] if found is not None else None


def destination_refusal(*, delivery: Any) -> ServiceError | None:
    """The outbound guard's refusal of this delivery's destination as an error on its field (``delivery.url`` of
    a web hook, ``delivery.host`` of FTP and SFTP), or None. For a member of the account, who cannot widen
    ``OUTBOUND_ALLOWED_NETWORKS``: an address the guard refuses (private, loopback, plain http outside the allowed
    networks) is a mistake to correct before saving. A name that does not resolve now is not refused
    (``destination_warning`` names it): resolution may differ by the time of delivery."""
    found = _destination_check(delivery)
    if found is None or found[2]:
        return None
    field, message, _unresolved = found
    return ServiceError(message.removeprefix("Deliveries will be refused: ").rstrip("."), field=field)


def _destination_check(delivery: Any) -> tuple[str, str, bool] | None:
    """(the field, why deliveries will be refused, whether only because the name does not resolve now), or None."""
    if not isinstance(delivery, dict):
        return None
    kind = delivery.get("type")
    if kind == "webhook":
        try:
            parts = urlsplit(str(delivery.get("url") or ""))
            host, port = parts.hostname or "", parts.port or (80 if parts.scheme == "http" else 443)
        except ValueError:
            return None  # validate_queue names a broken URL
        field = "delivery.url"
        if parts.scheme == "http":
            try:
                outbound.check_address(host, port, plain_http=True)  # the rule each delivery's connection applies
            except outbound.PlainHttpRefused:
                return (
                    field,
                    f"Deliveries will be refused: plain http is only sent to addresses inside "
                    f"OUTBOUND_ALLOWED_NETWORKS, and {host} is not inside it. Use https, or ask the operator to "
                    "add the receiver's network to OUTBOUND_ALLOWED_NETWORKS.",
                    False,
                )
            except outbound.OutboundRefused as exc:
                return field, f"Deliveries will be refused: {exc}.", isinstance(exc, outbound.Unresolved)
            return None
    elif kind in ("ftp", "sftp"):
        field = "delivery.host"
        host = str(delivery.get("host") or "")
        port = delivery.get("port") or (21 if kind == "ftp" else 22)
    else:
        return None
    try:
        outbound.check_address(host, int(port))
    except outbound.OutboundRefused as exc:
        return field, f"Deliveries will be refused: {exc}.", isinstance(exc, outbound.Unresolved)
    except (ValueError, TypeError) as exc:
        return field, f"Deliveries will be refused: {exc}.", False
    return None
