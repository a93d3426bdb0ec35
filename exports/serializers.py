"""Serializers of the back-office REST API for export queues and the export log, and the masking of
the secrets in a queue's delivery configuration (shared with the admin).

Secrets are never shown back: each delivery declares its own (``Delivery.mask``: FTP and SFTP passwords and
keys; a web hook's signing secret, auth values, header values, URL userinfo, query values and path) and they
read as ``MASK``. Sent back unchanged, ``MASK`` means "keep the stored value" (``unmask``), so a client can PUT
what it got, for the same destination. A configuration of no known type falls back to masking by key name.
"""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.outbox import EntityType
from core.secrets import MASK
from core.serializers import JSONField, read_only_meta
from exports.deliveries import REGISTRY as DELIVERIES
from exports.models import ExportAttempt, ExportItem, ExportQueue, ExportStatus, Trigger
from exports.transforms import REGISTRY as TRANSFORMS

__all__ = ["MASK", "mask", "unmask"]

_SECRET_KEY = re.compile(r"secret|password|passphrase|token|private_key|api[-_]?key|authorization", re.IGNORECASE)
_MAX_ID = 2**63 - 1


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def mask(config: Any) -> Any:
    """A delivery configuration as it reads: its delivery's secrets replaced by ``MASK``."""
    delivery = DELIVERIES.get(str(config.get("type"))) if isinstance(config, dict) else None
    if delivery is not None:
        return delivery.mask(config)
    return _mask_by_name(config)


def _mask_by_name(config: Any) -> Any:
    if isinstance(config, dict):
        return {
            key: MASK if is_secret_key(str(key)) and isinstance(value, str) and value else _mask_by_name(value)
            for key, value in config.items()
        }
    if isinstance(config, list):
        return [_mask_by_name(value) for value in config]
    return config


def unmask(config: Any, stored: Any) -> Any:
    """``config`` with every ``MASK`` value replaced by the stored value at the same place, for the same
    destination (``Delivery.unmask``).

    A ``MASK`` that keeps nothing (nothing stored at its place: a new header name, a new place; another
    destination) stays as it is, and the queue's checks refuse it naming the field (``delivery.headers.X-New``):
    it is never stored as a secret, and never dropped silently.
    """
    delivery = DELIVERIES.get(str(config.get("type"))) if isinstance(config, dict) else None
    if delivery is not None:
        return delivery.unmask(config, stored)
    return _unmask_by_path(config, stored)


def _unmask_by_path(config: Any, stored: Any) -> Any:
    if not isinstance(config, dict):
        return config
    stored_dict = stored if isinstance(stored, dict) else {}
    out: dict[str, Any] = {}
    for key, value in config.items():
        if value == MASK:
            kept = stored_dict.get(key)
            out[key] = kept if isinstance(kept, str) and kept else value  # nothing kept here: stays, refused
        else:
            out[key] = _unmask_by_path(value, stored_dict.get(key))
    return out


# --- Export queues -------------------------------------------------------------------------------------


class FiltersSerializer(serializers.Serializer):
    """Schema only: which entities a queue takes (empty or absent lists take everything)."""

    stock_locations = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only entities of these stock locations (identifiers); empty or absent: all.",
    )
    markets = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only entities of these markets (identifiers); empty or absent: all.",
    )
    ignore_stock_event_types = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Stock events: the types left out, e.g. `sale`; empty or absent: none.",
    )

    class Meta:
        ref_name = "ExportQueueFilters"


def config_schema(what: str, codes: list[str]) -> dict[str, Any]:
    """The schema of a transform or delivery configuration: its ``type`` (one of ``codes``) and that type's
    settings (docs/exports.md)."""
    return {
        "type": "object",
        "properties": {
            "type": {
                "type": "string",
                "description": f"The {what}: " + ", ".join(f"`{code}`" for code in codes) + "; the other keys are "
                "that type's settings (docs/exports.md).",
            }
        },
        "required": ["type"],
        "additionalProperties": True,
    }


TRANSFORM_SCHEMA = config_schema("transform", list(TRANSFORMS))
DELIVERY_SCHEMA = config_schema("delivery", list(DELIVERIES))


class ConfigField(JSONField):
    """A transform or delivery configuration: an object with a ``type`` and that type's settings
    (checked by ``exports.services.validate_queue``, which names the offending key)."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be an object with a type.")
        return value


@extend_schema_field(TRANSFORM_SCHEMA)
class TransformConfigField(ConfigField):
    """A transform's configuration."""


@extend_schema_field(DELIVERY_SCHEMA)
class DeliveryConfigField(ConfigField):
    """A delivery's configuration."""


@extend_schema_field(FiltersSerializer)
class FiltersField(JSONField):
    """The queue's filters, checked by the service (unknown keys are refused, not dropped)."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be an object.")
        return value


class ExportQueueInputSerializer(serializers.Serializer):
    # Defaults (not required=False) so that PUT resets an omitted field; PATCH skips defaults.
    name = serializers.CharField(
        max_length=200, help_text="Its name, for people: unique in the account, at most 200 characters."
    )
    entity_type = serializers.ChoiceField(
        choices=EntityType.choices,
        help_text="What it exports (spec: Events, Exportable entities); docs/events.md shows each.",
    )
    enabled = serializers.BooleanField(default=True, help_text="False: nothing new is queued nor sent. Default true.")
    filters = FiltersField(  # type: ignore[arg-type]  # the stubs expect a mapping
        default=dict,
        help_text="Which entities the queue takes: `stock_locations` and `markets` (identifiers; empty: all) and "
        "`ignore_stock_event_types`. Default: all.",
    )
    trigger = serializers.ChoiceField(
        choices=Trigger.choices,
        default=Trigger.REALTIME,
        help_text="When it sends: `realtime` (each entity after its commit), `hourly` or `daily` (at `daily_at`).",
    )
    daily_at = serializers.TimeField(
        default=None,
        allow_null=True,
        input_formats=["%H:%M", "%H:%M:%S"],
        help_text="HH:MM, local time of the account, for a daily trigger.",
    )
    concurrency = serializers.IntegerField(
        default=None,
        allow_null=True,
        min_value=1,
        help_text=(
            "Deliveries of this queue sent at the same time, across every worker, from 1 (in order) to the "
            "operator's EXPORT_QUEUE_CONCURRENCY_MAX; null: the service's default (EXPORT_QUEUE_CONCURRENCY)."
        ),
    )
    transform = TransformConfigField(  # type: ignore[arg-type]
        default=lambda: {"type": "identity"},
        help_text='How the entities are rendered, e.g. {"type": "identity"} (the default; docs/exports.md).',
    )
    delivery = DeliveryConfigField(
        help_text=(
            'E.g. {"type": "webhook", "url": "https://...", "headers": {}}. A web hook without a secret (or with '
            '"secret": null) gets a generated one; a masked value sent back keeps the stored one.'
        )
    )

    class Meta:
        ref_name = "ExportQueue"


class ExportQueueOutputSerializer(serializers.ModelSerializer):
    filters = FiltersField(
        read_only=True,
        help_text="Which entities the queue takes: `stock_locations` and `markets` (identifiers; empty: all) and "
        "`ignore_stock_event_types`.",
    )
    daily_at = serializers.TimeField(
        format="%H:%M",
        read_only=True,
        allow_null=True,
        help_text="A daily queue's time of day, `HH:MM` in the account's time zone; null for the other triggers.",
    )
    transform = TransformConfigField(
        read_only=True, help_text='How the entities are rendered, e.g. {"type": "identity"} (docs/exports.md).'
    )
    delivery = serializers.SerializerMethodField(help_text=f"Secrets read as {MASK}.")

    Meta = read_only_meta(
        ExportQueue,
        [
            "id",
            "name",
            "entity_type",
            "enabled",
            "filters",
            "trigger",
            "daily_at",
            "concurrency",
            "transform",
            "delivery",
            "failing_since",
            "disabled_at",
            "disabled_reason",
            "created_at",
            "updated_at",
        ],
        descriptions={
            "id": "The queue's id (its URL: `export-queues/{id}/`).",
            "name": "Its name, for people.",
            "entity_type": "What it exports (spec: Events, Exportable entities); docs/events.md shows each.",
            "enabled": "False: nothing new is queued nor sent (the service disables a queue failing for days).",
            "trigger": "`realtime`: each entity as it happens; `hourly` or `daily`: the window's entities together.",
        },
        extra_kwargs={
            "concurrency": {"help_text": "Deliveries sent at the same time (null: the service's default)."},
            "failing_since": {"help_text": "The first failed delivery since the last successful one (null: none)."},
            "disabled_at": {"help_text": "When the service disabled the queue itself (null: it did not)."},
            "disabled_reason": {
                "help_text": "Why the service disabled the queue: its destination failed for days. Enable it again "
                "with POST .../enable or enabled: true."
            },
        },
    )

    @extend_schema_field(DELIVERY_SCHEMA)
    def get_delivery(self, queue: ExportQueue) -> dict[str, Any]:
        return mask(queue.delivery)  # type: ignore[no-any-return]


class ExportQueueSavedOutputSerializer(ExportQueueOutputSerializer):
    generated_secret = serializers.SerializerMethodField(
        help_text="The web hook secret the service generated, shown this once; null when none was generated."
    )

    Meta = read_only_meta(
        ExportQueue,
        [*ExportQueueOutputSerializer.Meta.fields, "generated_secret"],
        ref_name="ExportQueueSaved",
        extra_kwargs=ExportQueueOutputSerializer.Meta.extra_kwargs,
    )

    def get_generated_secret(self, queue: ExportQueue) -> str | None:
        return self.context.get("generated_secret")  # type: ignore[no-any-return]


class PreviewInputSerializer(serializers.Serializer):
    object_id = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=_MAX_ID,
        help_text="The entity to render (its row id, as in the export log); the newest one by default.",
    )

    class Meta:
        ref_name = "ExportPreviewRequest"


class ConfigPreviewInputSerializer(PreviewInputSerializer):
    entity_type = serializers.ChoiceField(choices=EntityType.choices, help_text="The entity type to render.")
    transform = JSONField(help_text='The transform to try, e.g. {"type": "csv", ...}.')

    class Meta:
        ref_name = "ExportConfigPreviewRequest"


class PreviewOutputSerializer(serializers.Serializer):
    element_key = serializers.CharField(help_text="The rendered entity's element key (its key in the wrapper).")
    content_type = serializers.CharField(help_text="The rendered content's media type, e.g. `application/json`.")
    extension = serializers.CharField(help_text="The file extension a file delivery would use, e.g. `json`.")
    content = serializers.CharField(help_text="The rendered bytes as UTF-8 text (undecodable bytes replaced).")

    class Meta:
        ref_name = "ExportPreview"


class OutputSchemaOutputSerializer(serializers.Serializer):
    entity_type = serializers.CharField(help_text="The queue's entity type, e.g. `sales`.")
    transform = serializers.CharField(help_text="The queue's transform: `identity`, `simple_json`, `csv`, ...")
    content_type = serializers.CharField(help_text="The media type of what a delivery sends.")
    extension = serializers.CharField(help_text="The extension of an uploaded or attached export, without the dot.")
    json_schema = JSONField(
        allow_null=True,
        help_text="Identity and simple JSON: a JSON Schema (draft 2020-12, self-contained) every export of the queue "
        "matches: element key to element, the element as the transform's configuration makes it. Null otherwise.",
    )
    csv = JSONField(
        allow_null=True,
        help_text="CSV: the layout: `rows`, `row` (what one row is), `header`, `separator`, `decimal_separator`, "
        "`quoting`, `line_terminator`, `encoding`, `bom`, `timezone`, `whole_numbers_as_integers`, "
        "`required_values` and `columns` in order, each with `position`, `header`, `source` (`path` with `path` "
        "and `of`, `value`, `derived` or `count`), `type` (`text`, `number`, `money`, `date` with `date_format`, "
        "`boolean`, `json` or `empty`), `description` and `in_schema` (its path is in the element's schema). "
        "Null otherwise.",
    )

    class Meta:
        ref_name = "ExportOutputSchema"


class QueueRetryInputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=[(ExportStatus.FAILURE.value, "failure")],
        default=ExportStatus.FAILURE.value,
        help_text="Which items to re-send when no ids are given: the failed ones.",
    )
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=_MAX_ID),
        required=False,
        max_length=1000,
        help_text="Re-send exactly these items of the queue (failed, skipped or delivered: a replay).",
    )

    class Meta:
        ref_name = "ExportQueueRetryRequest"


class RetriedOutputSerializer(serializers.Serializer):
    retried = serializers.IntegerField(help_text="How many items were handed to new deliveries.")

    class Meta:
        ref_name = "ExportRetried"


# --- The export log ------------------------------------------------------------------------------------


class ExportLogFilterSerializer(serializers.Serializer):
    """Query parameters of the list; an empty one means no filter."""

    queue = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=_MAX_ID)
    status = serializers.ChoiceField(choices=ExportStatus.choices, required=False, allow_blank=True)
    entity_type = serializers.ChoiceField(choices=EntityType.choices, required=False, allow_blank=True)
    element_key = serializers.CharField(max_length=255, required=False, allow_blank=True)


class ExportAttemptSerializer(serializers.ModelSerializer):
    sent = serializers.CharField(
        read_only=True,
        help_text="What was sent, in short, secrets masked (at most 500 characters): a web hook's method, URL, size "
        "and content type; an e-mail's recipient count, subject and attachment; a file's server, path and size.",
    )
    answer = serializers.CharField(
        read_only=True,
        help_text="The start of the answer (at most 512 bytes of its text): a web hook's body, whatever its "
        "status; an FTP or SMTP server's last reply line; an SFTP server's identification line.",
    )

    Meta = read_only_meta(
        ExportAttempt,
        ["number", "ok", "status_code", "error", "duration_ms", "started_at", "sent", "answer"],
        descriptions={
            "number": "The attempt's number in its delivery, from 1.",
            "ok": "True: the destination took it (a web hook: any 2xx).",
            "status_code": "A web hook's HTTP status; null for the other deliveries or when no answer came.",
            "error": "Why it failed, secrets redacted (empty when it succeeded).",
            "duration_ms": "How long the attempt took, in milliseconds.",
            "started_at": "When it started (ISO 8601).",
        },
    )


def _delivery_field(field: type[serializers.Field], name: str, help_text: str) -> serializers.Field:
    """A read-only field of the item's delivery, null while the item has none."""
    return field(source=f"delivery.{name}", read_only=True, allow_null=True, help_text=help_text)


class ExportLogOutputSerializer(serializers.ModelSerializer):
    queue = serializers.IntegerField(source="queue_id", read_only=True, help_text="The id of the item's queue.")
    queue_name = serializers.CharField(source="queue.name", read_only=True, help_text="The queue's name.")
    attempts = serializers.SerializerMethodField(help_text="Attempts of the item's delivery so far.")
    status_code = _delivery_field(
        serializers.IntegerField, "status_code", "The last attempt's HTTP status (web hooks); null without one."
    )
    error = _delivery_field(
        serializers.CharField, "error", "Why the last attempt failed, secrets redacted; null without a delivery."
    )
    duration_ms = _delivery_field(
        serializers.IntegerField, "duration_ms", "How long the last attempt took, in milliseconds; null before one."
    )
    delivery_id = _delivery_field(
        serializers.CharField, "delivery_id", "Sent as webhook-id; null while a cron item waits for its window."
    )
    finished_at = _delivery_field(
        serializers.DateTimeField,
        "finished_at",
        "When the delivery reached its outcome (ISO 8601); null while it is pending.",
    )
    paused_until = _delivery_field(
        serializers.DateTimeField,
        "paused_until",
        "Not sent: the destination's circuit breaker is open; the delivery waits until then (not an "
        "attempt: its retries are kept).",
    )
    pause_reason = _delivery_field(
        serializers.CharField,
        "pause_reason",
        "Why the delivery is paused (the breaker's last failure); empty when it is not.",
    )

    Meta = read_only_meta(
        ExportItem,
        [
            "id",
            "queue",
            "queue_name",
            "entity_type",
            "element_key",
            "status",
            "message",
            "attempts",
            "status_code",
            "error",
            "duration_ms",
            "delivery_id",
            "created_at",
            "finished_at",
            "paused_until",
            "pause_reason",
            "attempt_log",
        ],
        ref_name="ExportLogEntry",
        descriptions={
            "id": "The item's id (the `object_id` of a preview is the entity's, not this).",
            "entity_type": "What the item exports.",
            "element_key": "The entity's key in the wrapper (docs/events.md: each type's element key).",
            "status": "`pending` (not sent yet), `success`, `failure` (final) or `skipped` (the entity is gone, or "
            "the transform skips it; `message` says which).",
            "message": "What happened, for a person (empty while pending).",
        },
    )

    # In the list too (prefetched, so a page costs the same queries): one "status" enum component is
    # shared by list and detail, and the import log's "status" enum keeps its own name.
    attempt_log = serializers.SerializerMethodField(help_text="The tries of the item's current delivery.")

    def get_attempts(self, item: ExportItem) -> int:
        return item.delivery.attempts if item.delivery is not None else 0

    @extend_schema_field(ExportAttemptSerializer(many=True))
    def get_attempt_log(self, item: ExportItem) -> list[dict[str, Any]]:
        if item.delivery is None:
            return []
        return ExportAttemptSerializer(item.delivery.attempt_log.all(), many=True).data  # type: ignore[return-value]
