"""Stock events (spec: Events; Stock event). Element key: ``"stock-event-<id>"``.

The JSON form is built from the row's columns: exactly the spec's Stock event, with optional fields
(``variant_id``, ``sale_id``, the ``stock_count_*`` of a stock count) present only when they apply, the
stock location as its identifier and the timestamp as an ISO 8601 string in UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from exports.entities.base import EntityDefinition
from ledger.models import StockEvent, StockEventType


def element_key(event: StockEvent) -> str:
    return f"stock-event-{event.pk}"


def number(value: Decimal) -> int | Decimal:
    """A stored quantity (6 places) as the number it is: ``-2``, not ``-2.000000``."""
    return int(value) if value == value.to_integral_value() else value.normalize()


def iso_utc(value: datetime) -> str:
    spec = "milliseconds" if value.microsecond else "seconds"
    return value.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")


def to_json(event: StockEvent) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if event.adjustment is not None:
        body["adjustment"] = number(event.adjustment)
    else:
        assert event.new_stock_value is not None  # the table's check constraint: exactly one of the two
        body["new_stock_value"] = number(event.new_stock_value)
    body["product_id"] = event.product_id
    if event.variant_id:
        body["variant_id"] = event.variant_id
    if event.sale_id:
        body["sale_id"] = event.sale_id
    body["stock_location_id"] = event.stock_location.identifier
    if event.type == StockEventType.STOCK_COUNT_RESET:
        if event.stock_count_diff is not None:
            body["stock_count_diff"] = number(event.stock_count_diff)
        if event.stock_count_expected is not None:
            body["stock_count_expected"] = number(event.stock_count_expected)
        if event.stock_count_id:
            body["stock_count_id"] = event.stock_count_id
    body["timestamp"] = iso_utc(event.timestamp)
    body["type"] = event.type
    return body


def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    rows = StockEvent.objects.select_related("stock_location").filter(pk__in=list(object_ids))
    return {row.pk: to_json(row) for row in rows}


def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
    rows = StockEvent.objects.filter(account_id=account_id)
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    return (row.pk, element_key(row)) if row else None


ENTITY = EntityDefinition(
    code="stock_events", model_label="ledger.StockEvent", element_key="stock-event-<id>", load=load, find=find
)
