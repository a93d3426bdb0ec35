"""Export queue configuration (admin, back office and REST API): validated, created, changed and deleted with
an audit entry; the per-account limit; the outbound guard's view of a destination."""

from __future__ import annotations

import base64
import secrets
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts.models import Account
from accounts.services import within_account_limit
from core import outbound
from core.errors import Conflict, ServiceError
from exports import circuit, trail
from exports.deliveries import REGISTRY as DELIVERIES
from exports.models import EntityType, ExportQueue, Trigger
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import ConfigError

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


def with_secret(delivery: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
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
    fields["delivery"], secret = with_secret(fields["delivery"])
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
        fields["delivery"], secret = with_secret(fields["delivery"])
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
