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
    integration = by_identifier()
    stock_location = by_identifier(allow_null=True)
    markets = serializers.ListField(child=serializers.CharField(), read_only=True)
    # A declared field shadows Serializer.errors only in the type stubs: DRF pops fields off the class.
    errors = ImportErrorSerializer(many=True, read_only=True, help_text="Why the item was rejected.")  # type: ignore[assignment]
    payload = PayloadField(read_only=True, allow_null=True)

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
    )
