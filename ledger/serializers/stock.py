"""Stock: the schema of posted stock events and the serializers of the stock read API (spec: Stock event).

Posted events are validated by their declared body, ``PosStockEvent`` (every error names its exact path,
``[3].new_stock_value``), which is also their request schema; the read API answers with DRF ``ModelSerializer``s.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.declare import Body, Field, OneOrMany, optional, rule
from core.nodes import INVALID, Components, Enum, Node, Num, Report, Schema, Str, join, nullable
from core.serializers import JSONField, read_only_meta
from ledger.models import StockEvent, StockEventType, StockLevel

# --- Input: posted stock events ---------------------------------------------------------------------------

# The columns hold 6 decimal places; a finer quantity would be rounded silently by the database.
QUANTITY_PLACES = 6
# Epoch seconds beyond this are not a plausible event time (year 5138) and overflow some datetime paths.
MAX_EPOCH = 10**11

POS_TYPES = (StockEventType.RECEIVED, StockEventType.STOCK_COUNT_RESET, StockEventType.EXTERNAL_RESET)
FROM_SALES = "sale and return events come from sales (POST /api/v1/pos/checkouts), they cannot be posted"
ONLY_EXTERNAL = "only external_reset events can be imported"


class StockQuantity(Num):
    """A stock quantity: a finite number with at most ``QUANTITY_PLACES`` decimals (``Num``'s other limits)."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        value = super().check(value, path, report)
        if isinstance(value, Decimal) and value.as_tuple().exponent < -QUANTITY_PLACES:  # type: ignore[operator]
            return report.error(path, f"must have at most {QUANTITY_PLACES} decimal places", "invalid_number")
        return value if value is INVALID else Decimal(value)


class Timestamp(Node):
    """An ISO 8601 string with a time zone, or Unix seconds (with decimals); cleaned to an aware UTC datetime.

    A string without a time zone is refused: a register's local time and UTC differ by hours."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.strip())
            except ValueError:
                return report.error(path, "must be an ISO 8601 date and time", "invalid_timestamp")
            if parsed.tzinfo is None:
                return report.error(path, "must include a time zone (e.g. 'Z' or '+01:00')", "invalid_timestamp")
            return parsed.astimezone(UTC)
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return self.wrong_type("an ISO 8601 string or Unix seconds", value, path, report)
        if not Decimal(value).is_finite() or not 0 <= value < MAX_EPOCH:
            return report.error(path, "must be Unix seconds between 0 and 10^11", "out_of_range")
        return datetime.fromtimestamp(float(value), tz=UTC)

    def json_schema(self, components: Components) -> Schema:
        return {
            "oneOf": [
                {"type": "string", "format": "date-time", "description": "ISO 8601 with a time zone."},
                {"type": "number", "minimum": 0, "exclusiveMaximum": MAX_EPOCH},
            ],
            "description": "An ISO 8601 date and time with a time zone, or Unix seconds.",
        }


ID = Str()
STOCK_QUANTITY = StockQuantity()


def _amount_rule(obj: dict[str, Any], path: str, report: Report) -> None:
    """Spec: Stock event, exactly one of ``adjustment`` and ``new_stock_value``; what each type takes."""
    kind = obj["type"]
    adjustment, new_value = obj.get("adjustment"), obj.get("new_stock_value")
    if (adjustment is None) == (new_value is None):
        both = " (both given)" if adjustment is not None else ""
        report.error(
            join(path, "adjustment"), f"exactly one of adjustment or new_stock_value is required{both}", "exactly_one"
        )
    elif kind == StockEventType.RECEIVED:
        if new_value is not None:
            report.error(join(path, "new_stock_value"), "a received event takes an adjustment", "not_allowed")
        elif adjustment is not None and adjustment <= 0:
            report.error(join(path, "adjustment"), "must be positive for goods received", "out_of_range")
    elif kind == StockEventType.STOCK_COUNT_RESET:
        if adjustment is not None:
            report.error(join(path, "adjustment"), "a stock count takes the counted new_stock_value", "not_allowed")
        elif new_value is not None and new_value < 0:
            report.error(join(path, "new_stock_value"), "a counted stock must be at least 0", "out_of_range")
    elif adjustment is not None and adjustment == 0:
        report.error(join(path, "adjustment"), "must not be 0", "out_of_range")
    if kind == StockEventType.STOCK_COUNT_RESET and "stock_count_id" not in obj:
        report.error(join(path, "stock_count_id"), "is required for a stock count", "required")


class PosStockEvent(Body):
    """Spec: Stock event, as the POS posts it: goods received, a stock count or an external reset.
    ``stock_count_expected`` and ``stock_count_diff`` are not read: the service computes them from its own
    level (unknown: ignored)."""

    type = Field(
        Enum(POS_TYPES, hints={StockEventType.SALE: FROM_SALES, StockEventType.RETURN: FROM_SALES}),
        description=(
            "`received` (an adjustment above 0), `stock_count_reset` (the counted `new_stock_value`, 0 or more, "
            "with `stock_count_id`) or `external_reset`. Sales and returns come from the sales themselves."
        ),
    )
    product_id = Field(ID, description="The product's id (1-255 characters).")
    variant_id = optional(ID, description="The variant's id, for a variant product.")
    stock_location_id = Field(ID, description="A stock location identifier of the account.")
    adjustment = optional(
        STOCK_QUANTITY,
        description=(
            "Units added (or, below 0, removed), at most 6 decimals; not 0. Exactly one of this and `new_stock_value`."
        ),
    )
    new_stock_value = optional(
        STOCK_QUANTITY,
        description="The new stock level in units, at most 6 decimals. Exactly one of this and `adjustment`.",
    )
    stock_count_id = optional(ID, description="The stock count's id; required for `stock_count_reset`.")
    timestamp = optional(Timestamp(), description="Default: now.")
    identifier = optional(ID, description="The sender's own id of the event: posting it again records nothing.")

    amount = rule(_amount_rule)


class ImportedStockEvent(PosStockEvent):
    """Spec: Stock event, imported from an ERP or a warehouse system: an external reset."""

    type = Field(
        Enum(
            (StockEventType.EXTERNAL_RESET,),
            hints={t: ONLY_EXTERNAL for t in StockEventType.values if t != StockEventType.EXTERNAL_RESET},
        ),
        description="Only `external_reset` (also the default when left out).",
    )


# POST /api/v1/pos/stock-events: one event or an array of them.
MAX_EVENTS_PER_REQUEST = 1000
POS_STOCK_EVENTS = OneOrMany(PosStockEvent, max_items=MAX_EVENTS_PER_REQUEST, schema_name="PosStockEvents")


class _ExternalResetByDefault(Node):
    """An imported event: its ``type`` is ``external_reset``, which is also the default when left out; checked
    and published from the one declaration (``ImportedStockEvent``), with ``type`` optional in the schema."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, dict) and value.get("type") is None:
            value = {**value, "type": StockEventType.EXTERNAL_RESET}
        return ImportedStockEvent.check(value, path, report)

    def json_schema(self, components: Components) -> Schema:
        def build() -> Schema:
            schema = ImportedStockEvent.object_schema(components)
            schema["required"] = [name for name in schema["required"] if name != "type"]
            schema["properties"]["type"] = nullable(
                {**schema["properties"]["type"], "default": StockEventType.EXTERNAL_RESET.value}
            )
            schema["description"] = "\n".join(
                [
                    "Spec: Stock event, an external reset. `timestamp`: ISO 8601 with a time zone, or Unix seconds "
                    "(default: now).",
                    "Rules:",
                    schema.get("description", ""),
                ]
            )
            return schema

        return components.ref("ImportedStockReset", self, build)


# POST /imports/stock_events: external resets from an ERP or a warehouse system.
IMPORTED_STOCK_EVENT = _ExternalResetByDefault()


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
