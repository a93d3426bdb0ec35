"""Stock: the serializers of the stock read API (spec: Stock event). Posted events are declared bodies
(``ledger.bodies.stock``); the read API answers with DRF ``ModelSerializer``s.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.serializers import JSONField, read_only_meta
from ledger.models import StockEvent, StockEventType, StockLevel

# --- Read API: filters ------------------------------------------------------------------------------------


# An empty parameter (``?product_id=``) means no filter, as if it were left out.
class StockLevelFilterSerializer(serializers.Serializer):
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)
    product_id = serializers.CharField(max_length=255, required=False, allow_blank=True)
    variant_id = serializers.CharField(max_length=255, required=False, allow_blank=True)


class StockEventFilterSerializer(StockLevelFilterSerializer):
    type = serializers.ChoiceField(choices=StockEventType.choices, required=False, allow_blank=True)
    sale_id = serializers.CharField(max_length=255, required=False, allow_blank=True)


# --- Read API: output -------------------------------------------------------------------------------------


def _quantity(help_text: str) -> serializers.DecimalField:
    # Null where the event has no such figure (a stock count has no adjustment, a sale no counted value).
    return serializers.DecimalField(
        max_digits=20, decimal_places=6, coerce_to_string=False, read_only=True, allow_null=True, help_text=help_text
    )


@extend_schema_field({"type": ["string", "null"], "description": "null for a product without variants."})
class BlankAsNullField(serializers.CharField):
    def to_representation(self, value: str) -> Any:
        return value or None


VARIANT_HELP = "The variant's id; null for a product without variants."
STOCK_HELP = {
    "id": "The row's id.",
    "product_id": "The product's id.",
    "type": "What moved the stock: `sale`, `return` (from the sales), `received`, `stock_count_reset` or "
    "`external_reset`.",
    "timestamp": "When it happened, as the sender gave it (default: when it was posted).",
    "updated_at": "When the level last changed (ISO 8601).",
}


class StockLevelOutputSerializer(serializers.ModelSerializer):
    stock_location = by_identifier(help_text="The stock location's identifier.")
    variant_id = BlankAsNullField(read_only=True, help_text=VARIANT_HELP)
    quantity = _quantity("The units in stock (at most 6 decimals; may be below 0 when more was sold than recorded).")

    Meta = read_only_meta(
        StockLevel,
        ["id", "stock_location", "product_id", "variant_id", "quantity", "updated_at"],
        descriptions=STOCK_HELP,
    )


class StockEventOutputSerializer(serializers.ModelSerializer):
    stock_location = by_identifier(help_text="The stock location's identifier.")
    variant_id = BlankAsNullField(read_only=True, help_text=VARIANT_HELP)
    sale_id = BlankAsNullField(read_only=True, help_text="The sale that caused it (`sale`, `return`); null otherwise.")
    stock_count_id = BlankAsNullField(
        read_only=True, help_text="The stock count's id (`stock_count_reset`); null otherwise."
    )
    adjustment = _quantity("Units added (below 0: removed); null for an event that set the level.")
    new_stock_value = _quantity("The level the event set, in units; null for an adjustment.")
    stock_count_expected = _quantity("A stock count: the level before it, by the service's count; null otherwise.")
    stock_count_diff = _quantity("A stock count: counted minus expected; null otherwise.")

    Meta = read_only_meta(
        StockEvent,
        [
            "id",
            "type",
            "stock_location",
            "product_id",
            "variant_id",
            "adjustment",
            "new_stock_value",
            "sale_id",
            "stock_count_id",
            "stock_count_expected",
            "stock_count_diff",
            "timestamp",
            "created_at",
        ],
        descriptions=STOCK_HELP,
    )


class StockEventsRecordedSerializer(serializers.Serializer):
    """The answer of ``POST /api/v1/pos/stock-events``: every event recorded (all or nothing)."""

    status = serializers.CharField(help_text="Always `OK`: a refused event refuses them all (400).")
    message = serializers.CharField(help_text="What happened, for a person, e.g. `Recorded 2 stock event(s)`.")
    stock_events = serializers.ListField(
        child=JSONField(),
        help_text="Each event recorded, in the order posted: its `id` and its exported form "
        "(`ExportStockEventsElement`, with `stock_count_expected` and `stock_count_diff` of a stock count).",
    )
    stock_levels = StockLevelOutputSerializer(
        many=True, help_text="The level of each product and variant the events moved, after them."
    )

    class Meta:
        ref_name = "PosStockEventsRecorded"
