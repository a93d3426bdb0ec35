"""Exports: the outbox, delivery, retries, the sweeper and cron windows (spec: Events, Errors 4, Limits).

``enqueue`` is the only way an entity enters exports. It runs inside the transaction that creates the
entity and writes one export item per enabled matching queue (and, for real-time queues, the delivery
that will carry it), so a rolled-back entity exports nothing and a crash after commit loses nothing:
the sweeper hands over every delivery still pending after a grace period. A delivery is leased while a
worker works on it; a worker killed mid-delivery leaves the lease to run out and the delivery to be taken
up again. Receivers drop repeats by the delivery id every delivery carries.
"""

from __future__ import annotations

import base64
import logging
import secrets
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account, StockLocation
from core.errors import Conflict, ServiceError
from exports import circuit, retry
from exports.deliveries import REGISTRY as DELIVERIES
from exports.deliveries.base import DeliveryResult
from exports.entities import REGISTRY as ENTITIES
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
from integrations import outbound

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExportEntry:
    """One entity offered to exports: its row, its element key, where it happened (for queue filters)."""

    object_id: int
    element_key: str
    stock_location_id: int | None = None
    stock_event_type: str | None = None


def new_delivery_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


# --- The outbox ------------------------------------------------------------------------------------------


def enqueue(*, account: Account, entity_type: str, entries: Sequence[ExportEntry]) -> int:
    """Spec: Events. Put entities into every enabled queue of their type that accepts them.

    Must be called inside the transaction that creates the entities. Returns the number of items written.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("exports.services.enqueue must run inside the transaction that creates the entity")
    if not entries:
        return 0
    queues = list(ExportQueue.objects.filter(account=account, entity_type=entity_type, enabled=True))
    if not queues:
        return 0
    now = timezone.now()
    markets = _markets_of(entries) if any(q.filters.get("markets") for q in queues) else {}
    items: list[ExportItem] = []
    deliveries: list[ExportDelivery] = []
    for queue in queues:
        accepts = _filter(queue, markets)
        for entry in entries:
            if not accepts(entry):
                continue
            item = ExportItem(
                account=account,
                queue=queue,
                entity_type=entity_type,
                object_id=entry.object_id,
                element_key=entry.element_key[:255],
            )
            if queue.trigger == Trigger.REALTIME:
                item.delivery = ExportDelivery(
                    account=account, queue=queue, delivery_id=new_delivery_id(), next_attempt_at=now
                )
                deliveries.append(item.delivery)
            items.append(item)
    ExportDelivery.objects.bulk_create(deliveries)
    ExportItem.objects.bulk_create(items)  # each item takes its delivery's primary key, now that it has one
    if deliveries:
        transaction.on_commit(partial(hand_off, [d.pk for d in deliveries]))
    return len(items)


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


def hand_off(delivery_ids: Sequence[int], countdown: float | None = None, *, cron: bool = False) -> None:
    """After commit: give deliveries to Celery, one task per DELIVERY_BATCH of them. A failure here only
    delays them (the sweeper). Cron windows go by a task of their own, routed to the cron queue, so that a
    big file never waits in front of real-time web hooks (settings: TASK_ROUTING)."""
    from exports import tasks

    task = tasks.deliver_cron if cron else tasks.deliver
    ids = list(delivery_ids)
    for start in range(0, len(ids), DELIVERY_BATCH):
        try:
            task.apply_async((ids[start : start + DELIVERY_BATCH],), countdown=countdown)
        except Exception:  # the broker may be down; the deliveries are safe in the database
            logger.warning(
                "hand-off of %d export deliveries failed; the sweeper will retry", len(delivery_ids), exc_info=True
            )
            return


# --- Delivering ------------------------------------------------------------------------------------------


# Real-time deliveries one task sends in one go. Each still carries exactly one element (spec); only the
# database work for them is shared (one lease, one load, bulk outcome writes).
DELIVERY_BATCH = 50


def _lease(*, delivery_pks: Sequence[int], batch: int) -> list[ExportDelivery]:
    """Take these deliveries where they are due and nobody works on them, then other due real-time
    deliveries up to ``batch``. Row locks skip what another worker holds, so no delivery is taken twice."""
    now = timezone.now()
    due = ExportDelivery.objects.filter(status=ExportStatus.PENDING, next_attempt_at__lte=now).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )
    with transaction.atomic():
        locked = due.select_for_update(skip_locked=True, of=("self",))
        ids = list(locked.filter(pk__in=list(delivery_pks)).values_list("pk", flat=True))
        if batch > len(ids):  # cron windows (a window set) are never drawn in: a big batch must not hold these up
            others = locked.filter(window="").exclude(pk__in=list(delivery_pks)).order_by("next_attempt_at")
            ids += list(others.values_list("pk", flat=True)[: batch - len(ids)])
        if not ids:
            return []
        lease_until = now + timedelta(seconds=settings.EXPORT_LEASE_SECONDS)
        ExportDelivery.objects.filter(pk__in=ids).update(attempts=F("attempts") + 1, lease_until=lease_until)
    return list(ExportDelivery.objects.select_related("queue", "account").filter(pk__in=ids).order_by("pk"))


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


def deliver(*, delivery_pk: int, batch: int = DELIVERY_BATCH) -> str | None:
    """One delivery (see ``deliver_batch``). Returns the status it reached, or None when it was not due or
    another worker has it."""
    return deliver_batch(delivery_pks=[delivery_pk], batch=batch).get(delivery_pk)


def deliver_batch(*, delivery_pks: Sequence[int], batch: int = DELIVERY_BATCH) -> dict[int, str]:
    """Spec: Events (trigger, transformation, delivery; outcome and retry). Sends these deliveries and other
    due real-time ones up to ``batch`` (each still one element), records every outcome, and returns the
    status each reached."""
    deliveries = _lease(delivery_pks=delivery_pks, batch=batch)
    if not deliveries:
        return {}
    # A cron window's batch can be any size: it is read in pages and rendered into a file (``_send_streamed``).
    realtime = [d for d in deliveries if not d.window]
    items_of: dict[int, list[ExportItem]] = {d.pk: [] for d in realtime}
    for item in ExportItem.objects.filter(delivery__in=realtime).order_by("id"):
        items_of[item.delivery_id].append(item)  # type: ignore[index]
    entities = _load_entities([i for items in items_of.values() for i in items])
    outcomes = [_send(d, items_of[d.pk], entities) if not d.window else _send_streamed(d) for d in deliveries]
    _record(outcomes)
    return {o.delivery.pk: o.status for o in outcomes}


def _send(
    delivery: ExportDelivery, items: list[ExportItem], entities: dict[tuple[str, int], dict[str, Any]]
) -> _Outcome:
    queue = delivery.queue
    started = timezone.now()
    clock = time.monotonic()
    skipped: dict[int, str] = {}
    try:
        elements, skipped = elements_of(queue, items, entities)
        if not elements:
            return _Outcome(delivery, items, DeliveryResult(ok=True), ExportStatus.SKIPPED, skipped, started, 0)
        context = render_context(queue, delivery.delivery_id, started)
        rendered = TRANSFORMS[queue.transform.get("type", "identity")].render(elements, context, queue.transform)
        result = circuit.deliver(rendered, queue=queue, delivery_id=delivery.delivery_id, context=context)
    except (TransformError, ConfigError, KeyError) as exc:
        result = DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    except Exception as exc:  # a bug must not strand the delivery: it is logged and recorded as failed
        logger.exception("export delivery %s failed", delivery.delivery_id)
        result = DeliveryResult(ok=False, error=f"internal error: {type(exc).__name__}")
    return _outcome(delivery, items, result, skipped, started, clock)


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
            for object_id, entity in ENTITIES[entity_type].load(ids).items()
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


def _send_streamed(delivery: ExportDelivery) -> _Outcome:
    """A cron window's batch: entities read in pages, rendered into a spooled temporary file, uploaded from
    it, so memory stays flat whatever the batch size (for the streaming transforms: identity and CSV)."""
    queue = delivery.queue
    started = timezone.now()
    clock = time.monotonic()
    skipped: dict[int, str] = {}
    sent = [0]
    try:
        waiting = circuit.paused(queue)  # asked before the file is rendered: it may be large
        if waiting is not None:
            return _outcome(delivery, None, waiting, skipped, started, clock)
        with tempfile.SpooledTemporaryFile(max_size=STREAM_SPOOL_BYTES) as out:
            context = render_context(queue, delivery.delivery_id, started)
            transform = TRANSFORMS[queue.transform.get("type", "identity")]
            rendered = transform.render_to(_stream_elements(delivery, skipped, sent), context, queue.transform, out)
            if not sent[0]:
                return _Outcome(delivery, None, DeliveryResult(ok=True), ExportStatus.SKIPPED, skipped, started, 0)
            result = circuit.deliver(rendered, queue=queue, delivery_id=delivery.delivery_id, context=context)
    except (TransformError, ConfigError, KeyError) as exc:
        result = DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    except Exception as exc:  # a bug must not strand the delivery: it is logged and recorded as failed
        logger.exception("export delivery %s failed", delivery.delivery_id)
        result = DeliveryResult(ok=False, error=f"internal error: {type(exc).__name__}")
    return _outcome(delivery, None, result, skipped, started, clock)


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
                )
                for o in outcomes
                if not o.paused
            ]
        )
        for o in outcomes:
            d = o.delivery
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
                "next_attempt_at",
                "finished_at",
                "paused_until",
                "pause_reason",
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
            # The database holds the retry time; a short countdown only saves waiting for the sweeper.
            if o.retry_in is not None and o.retry_in.total_seconds() <= 60:
                transaction.on_commit(
                    partial(hand_off, [o.delivery.pk], o.retry_in.total_seconds(), cron=bool(o.delivery.window))
                )


# --- Sweeper, retries requested by staff, cron windows -------------------------------------------------


def sweep(*, grace: timedelta | None = None) -> int:
    """Hand over deliveries that are due and not being worked on: first attempts whose hand-off was lost
    (older than the grace period), retries whose time has come, leases that ran out (a worker died)."""
    if grace is None:
        grace = timedelta(seconds=settings.EXPORT_SWEEP_GRACE_SECONDS)
    now = timezone.now()
    due = (
        ExportDelivery.objects.filter(status=ExportStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .filter(Q(attempts__gt=0) | Q(created_at__lte=now - grace))
        .order_by("next_attempt_at")
        .values_list("pk", "window")[:10_000]
    )
    rows = list(due)
    cron = [pk for pk, window in rows if window]
    if cron:
        hand_off(cron, cron=True)
    hand_off([pk for pk, window in rows if not window])
    return len(rows)


def retry_items(*, account: Account, items: Sequence[ExportItem]) -> int:
    """Send these items again (a failed one, a selection, a replay of a delivered one) in new deliveries.

    Each re-send is a new delivery with a new delivery id: a replay is meant to arrive again.
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
        transaction.on_commit(partial(hand_off, [d.pk for d in deliveries]))
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
    started: list[int] = []
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
        started.append(delivery.pk)
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


def _with_secret(delivery: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A web hook without a secret gets a new one, returned to be shown once."""
    if delivery.get("type") != "webhook" or delivery.get("secret"):
        return delivery, None
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    return {**delivery, "secret": secret}, secret


def create_queue(*, account: Account, **fields: Any) -> tuple[ExportQueue, str | None]:
    """A new export queue. Returns it and, for a web hook without a secret, the generated secret."""
    validate_queue(
        entity_type=fields.get("entity_type", ""),
        trigger=fields.get("trigger", Trigger.REALTIME),
        transform=fields.get("transform", {"type": "identity"}),
        delivery=fields.get("delivery"),
        filters=fields.get("filters"),
    )
    fields["delivery"], secret = _with_secret(fields["delivery"])
    fields.setdefault("transform", {"type": "identity"})
    fields.setdefault("filters", {})
    try:
        with transaction.atomic():
            queue = ExportQueue.objects.create(account=account, **fields)
    except IntegrityError:
        raise ServiceError("a queue with this name exists", field="name", code="duplicate") from None
    return queue, secret


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
    validate_queue(
        entity_type=merged["entity_type"],
        trigger=merged["trigger"],
        transform=merged["transform"],
        delivery=merged["delivery"],
        filters=merged["filters"],
    )
    secret = None
    if "delivery" in fields:
        fields["delivery"], secret = _with_secret(fields["delivery"])
    switched_on = fields.get("enabled") is True and not queue.enabled
    for name, value in fields.items():
        setattr(queue, name, value)
    try:
        with transaction.atomic():
            queue.save(update_fields=[*fields, "updated_at"])
    except IntegrityError:
        raise ServiceError("a queue with this name exists", field="name", code="duplicate") from None
    if switched_on:  # as the enable action: the disable's reason cleared, the destination's breaker closed
        circuit.enable_queue(account=account, queue=queue)
    return queue, secret


def delete_queue(*, account: Account, queue: ExportQueue) -> None:
    """Remove a queue with its export log and deliveries (the entities themselves stay)."""
    if queue.account_id != account.pk:
        raise ServiceError("the queue belongs to another account", field="queue")
    with transaction.atomic():
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


def destination_warning(*, delivery: Any) -> str | None:
    """Why the outbound guard (``integrations.outbound``) would refuse this delivery's destination today, or None.

    Checked when staff save a queue, so that a destination the guard refuses is named then and not first by a
    failed delivery. Only a warning: the same configuration is valid through the API, name resolution may
    differ by the time of delivery, and the operator may widen ``OUTBOUND_ALLOWED_NETWORKS`` later. E-mail goes
    through the operator's relay and is never checked."""
    if not isinstance(delivery, dict):
        return None
    kind = delivery.get("type")
    if kind == "webhook":
        parts = urlsplit(str(delivery.get("url") or ""))
        try:
            host, port = parts.hostname or "", parts.port or (80 if parts.scheme == "http" else 443)
        except ValueError:
            return None  # validate_queue names a broken URL
        if parts.scheme == "http":
            try:
                allowed = outbound.plain_http_allowed(host, port)
            except outbound.OutboundRefused as exc:
                return f"Deliveries will be refused: {exc}."
            if not allowed:
                return (
                    f"Deliveries will be refused: plain http is only sent to addresses inside "
                    f"OUTBOUND_ALLOWED_NETWORKS, and {host} is not inside it. Use https, or ask the operator to "
                    "add the receiver's network to OUTBOUND_ALLOWED_NETWORKS."
                )
            return None
    elif kind in ("ftp", "sftp"):
        host = str(delivery.get("host") or "")
        port = delivery.get("port") or (21 if kind == "ftp" else 22)
    else:
        return None
    try:
        outbound.check_address(host, int(port))
    except (outbound.OutboundRefused, ValueError, TypeError) as exc:
        return f"Deliveries will be refused: {exc}."
    return None
