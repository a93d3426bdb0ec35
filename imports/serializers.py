"""Serializers of the back-office REST API for the import log."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.serializers import JSONField, read_only_meta
from imports.models import ImportItem, ImportKind, ImportStatus

INTEGRATION_FILTER = "integration_identifier"


class ImportLogFilterSerializer(serializers.Serializer):
    """Query parameters of the list; an empty one means no filter."""

    # Not "integration": that query parameter names the caller's own integration for authentication.
    integration_identifier = serializers.CharField(
        source="integration", max_length=64, required=False, allow_blank=True
    )
    status = serializers.ChoiceField(choices=ImportStatus.choices, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=ImportKind.choices, required=False, allow_blank=True)
    identifier = serializers.CharField(max_length=255, required=False, allow_blank=True)
    request_id = serializers.UUIDField(required=False, allow_null=True)


@extend_schema_field(OpenApiTypes.ANY)
class PayloadField(JSONField):
    """The posted item as received (an object, or an id string for deletions; null when unparseable)."""


class ImportErrorSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="The path of the fault inside the item, e.g. `basket.line_items[0].price`.")
    message = serializers.CharField(help_text="What is wrong, for a person.")
    code = serializers.CharField(
        required=False, help_text="A stable code, e.g. `required`, `out_of_range`, `duplicate`."
    )

    class Meta:
        ref_name = "ImportItemError"


class ImportLogOutputSerializer(serializers.ModelSerializer):
    integration = by_identifier(help_text="The identifier of the integration whose key posted the item.")
    stock_location = by_identifier(
        allow_null=True, help_text="Orders and stock events: the identifier of the stock location; null otherwise."
    )
    markets = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="Campaigns and product rules: the identifiers of the markets written; empty otherwise.",
    )
    # A declared field shadows Serializer.errors only in the type stubs: DRF pops fields off the class.
    errors = ImportErrorSerializer(many=True, read_only=True, help_text="Why the item was rejected.")  # type: ignore[assignment]
    payload = PayloadField(
        read_only=True,
        allow_null=True,
        help_text="The item as posted (an object, or the id of a deletion); null when it could not be read.",
    )

    Meta = read_only_meta(
        ImportItem,
        [
            "id",
            "integration",
            "kind",
            "request_id",
            "index",
            "identifier",
            "stock_location",
            "markets",
            "status",
            "message",
            "errors",
            "attempts",
            "payload",
            "created_at",
            "processed_at",
        ],
        ref_name="ImportLogEntry",
        descriptions={
            "id": "The log entry's id.",
            "kind": "What the item is (an incoming order, a campaign deletion...).",
            "identifier": "The item's own identifier (`order_identifier`, `id`, `product_id`); empty without one.",
            "status": "`pending` (queued), `success`, `failure` (failed when processed: a duplicate, an unknown "
            "order...) or `rejected` (refused by validation in the request, never queued).",
            "message": "What happened, for a person.",
            "attempts": "How often a queued item was processed (retries included).",
            "processed_at": "When it was processed (ISO 8601); null while pending or when rejected in the request.",
        },
    )
