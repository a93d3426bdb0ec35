"""Exports' way in: the outbox's sink writes export items (and real-time deliveries) in the entity's
transaction, filtered by each queue; ``hand_off`` gives the committed deliveries to Celery, one task per queue."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from celery import current_app
from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.models import Account, StockLocation
from core import bulk, outbox
from core.jsonenc import DecimalJSONDecoder
from exports.models import ExportDelivery, ExportItem, ExportQueue, Trigger
from exports.services import leasing

logger = logging.getLogger(__name__)


# One entity offered to exports (``core.outbox``): its row, its element key, where it happened.
ExportEntry = outbox.Entry


def new_delivery_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


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
        by_queue = grouped_by_queue(deliveries)
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
# Delivery ids named in one task (it sends these first, then its queue's other due deliveries).
HAND_OFF_IDS = 100


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
    at_cap = leasing.at_cap(list(by_queue), cron=cron, bounds=bounds) if countdown is None else set()
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


def grouped_by_queue(deliveries: Iterable[ExportDelivery]) -> dict[int, list[int]]:
    grouped: dict[int, list[int]] = {}
    for delivery in deliveries:
        grouped.setdefault(delivery.queue_id, []).append(delivery.pk)
    return grouped
