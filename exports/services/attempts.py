"""One leased delivery's attempt: its items rendered by the queue's transform and sent through the breaker
(``exports.circuit``), a cron window streamed through a temporary file, and what it gave as an outcome."""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from exports import circuit, retry
from exports.deliveries.base import DeliveryResult
from exports.entities import REGISTRY as ENTITIES
from exports.entities.base import EntityDefinition
from exports.models import ExportDelivery, ExportItem, ExportQueue
from exports.services.outcomes import Delivered, DeliveryOutcome, Failed, GaveUp, Paused, Skipped
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import ConfigError, Element, RenderContext, TransformError

logger = logging.getLogger(__name__)


def render_context(queue: ExportQueue, delivery_id: str, now: datetime | None = None) -> RenderContext:
    return RenderContext(
        queue={"id": queue.pk, "name": queue.name, "entity_type": queue.entity_type, "trigger": queue.trigger},
        account={"identifier": queue.account.identifier, "name": queue.account.name},
        now=now or timezone.now(),
        delivery_id=delivery_id,
    )


def load_entities(items: Sequence[ExportItem]) -> dict[tuple[str, int], dict[str, Any]]:
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
        entities = load_entities(items)
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


def send_one(
    delivery: ExportDelivery,
    *,
    timeout: float,
    items: list[ExportItem] | None = None,
    entities: dict[tuple[str, int], dict[str, Any]] | None = None,
) -> DeliveryOutcome:
    """One leased delivery: a real-time one with its items and entities (read here unless given), or a cron
    window streamed."""
    if delivery.window:
        return _send_streamed(delivery, timeout=timeout)
    if items is None:
        items = list(ExportItem.objects.filter(delivery=delivery).order_by("id"))
    return _send(delivery, items, entities if entities is not None else load_entities(items), timeout=timeout)


def _send(
    delivery: ExportDelivery,
    items: list[ExportItem],
    entities: dict[tuple[str, int], dict[str, Any]],
    *,
    timeout: float | None = None,
) -> DeliveryOutcome:
    queue = delivery.queue
    started = timezone.now()
    skipped: dict[int, str] = {}

    def send() -> DeliveryResult | Skipped:
        elements, skipped_now = elements_of(queue, items, entities)
        skipped.update(skipped_now)
        if not elements:
            return Skipped(delivery, items, DeliveryResult(ok=True), skipped, started, 0)
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
    send: Callable[[], DeliveryResult | Skipped],
) -> DeliveryOutcome:
    """Run ``send`` (render and deliver, or decide there is nothing to send) as the delivery's attempt: what it
    raises is recorded too (the task's soft time limit as a timeout, anything else as a failure)."""
    clock = time.monotonic()
    try:
        result = send()
    except SoftTimeLimitExceeded:
        return timed_out(delivery, items, skipped, started, clock)
    except Exception as exc:  # a bug must not strand the delivery: it is logged and recorded as failed
        result = not_sent(delivery, exc)
    if not isinstance(result, DeliveryResult):
        return result
    return outcome_of(delivery, items, result, skipped, started, clock)


def not_sent(delivery: ExportDelivery, exc: Exception) -> DeliveryResult:
    """The failed attempt of a send that raised: a transform or configuration error (its message), or a bug
    (logged with its traceback, recorded by its type only)."""
    if isinstance(exc, TransformError | ConfigError | KeyError):
        return DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    logger.exception("export delivery %s failed", delivery.delivery_id)
    return DeliveryResult(ok=False, error=f"internal error: {type(exc).__name__}")


# The error of an attempt cut off by the delivery task's soft time limit: a timeout, under the spec's retry rule.
TIME_LIMIT_ERROR = "timeout: the delivery task's time limit was reached"


def timed_out(
    delivery: ExportDelivery, items: list[ExportItem] | None, skipped: dict[int, str], started: datetime, clock: float
) -> DeliveryOutcome:
    result = DeliveryResult(ok=False, error=TIME_LIMIT_ERROR, retryable=True)
    return outcome_of(delivery, items, result, skipped, started, clock, cut_off=True)


def outcome_of(
    delivery: ExportDelivery,
    items: list[ExportItem] | None,
    result: DeliveryResult,
    skipped: dict[int, str],
    started: datetime,
    clock: float,
    *,
    cut_off: bool = False,
) -> DeliveryOutcome:
    """What the send's ``result`` makes of the delivery's attempt: delivered; paused by the breaker; or failed, to
    be retried or given up under the spec's retry rule. ``cut_off``: the task's soft time limit ended the send."""
    queue = delivery.queue
    duration_ms = int((time.monotonic() - clock) * 1000)
    if result.ok:
        return Delivered(delivery, items, result, skipped, started, duration_ms)
    if result.paused_until is not None:
        return Paused(delivery, result, retry_in=max(result.paused_until - timezone.now(), timedelta(0)))
    retry_in = retry.retry_delay(
        trigger=queue.trigger,
        delivery_type=queue.delivery.get("type", ""),
        retryable=result.retryable,
        attempts=delivery.attempts,
        base_delay=settings.EXPORT_RETRY_BASE_DELAY,
    )
    if retry_in is None:
        return GaveUp(delivery, items, result, skipped, started, duration_ms, cut_off=cut_off)
    return Failed(delivery, items, result, skipped, started, duration_ms, retry_in=retry_in, cut_off=cut_off)


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


def _send_streamed(delivery: ExportDelivery, *, timeout: float | None = None) -> DeliveryOutcome:
    """A cron window's batch: entities read in pages, rendered into a spooled temporary file, uploaded from
    it, so memory stays flat whatever the batch size (for the streaming transforms: identity and CSV)."""
    queue = delivery.queue
    started = timezone.now()
    skipped: dict[int, str] = {}
    sent = [0]

    def send() -> DeliveryResult | Skipped:
        waiting = circuit.paused(queue)  # asked before the file is rendered: it may be large
        if waiting is not None:
            return waiting
        with tempfile.SpooledTemporaryFile(max_size=STREAM_SPOOL_BYTES) as out:
            context = render_context(queue, delivery.delivery_id, started)
            transform = TRANSFORMS[queue.transform.get("type", "identity")]
            rendered = transform.render_to(_stream_elements(delivery, skipped, sent), context, queue.transform, out)
            if not sent[0]:
                return Skipped(delivery, None, DeliveryResult(ok=True), skipped, started, 0)
            return circuit.deliver(
                rendered, queue=queue, delivery_id=delivery.delivery_id, context=context, timeout=timeout
            )

    return _attempt(delivery, None, skipped, started, send)
