"""Trying a configuration out: a transform previewed on a stored entity, and one test send through the
queue's delivery. Nothing is written."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from accounts.models import Account
from core.errors import ServiceError
from exports.deliveries import REGISTRY as DELIVERIES
from exports.deliveries.base import DeliveryResult
from exports.entities import REGISTRY as ENTITIES
from exports.models import EntityType, ExportQueue
from exports.services import attempts, queues
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import ConfigError, Element, TransformError

logger = logging.getLogger(__name__)


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
            [element], attempts.render_context(queue, "preview"), queue.transform
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
            rendered,
            config=queue.delivery,
            delivery_id=delivery_id,
            context=attempts.render_context(queue, delivery_id),
        )
    except (TransformError, ConfigError, KeyError) as exc:
        result = DeliveryResult(ok=False, error=f"transform or configuration error: {exc}")
    except Exception as exc:  # as in ``attempts.not_sent``: a bug is logged and reported, never a crash to staff
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
        delivery = {**delivery, "secret": stored} if stored else queues.with_secret(delivery)[0]
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
