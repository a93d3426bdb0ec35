"""Stock events, declared once (spec: Stock event): what the POS posts and what an ERP or a warehouse system
imports.

Posted events are validated by their declared body, ``PosStockEvent`` (every error names its exact path,
``[3].new_stock_value``), which is also their request schema; ``POS_STOCK_EVENTS`` takes one or an array of them,
and ``IMPORTED_STOCK_EVENT`` is an imported external reset (``imports.bodies`` wraps it in its envelope).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from core.declare import Body, Field, OneOrMany, optional, rule
from core.nodes import INVALID, Components, Enum, Node, Num, Report, Schema, Str, join, nullable
from ledger.models import StockEventType

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
