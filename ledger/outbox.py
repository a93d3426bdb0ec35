"""What the ledger offers to exports (``core.outbox``): each entity's element key (spec: Events, unique and stable
across re-sends) and the JSON form of a stock event, which the stock API answers with too. The ledger never
imports exports; the exports app reads these.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from ledger.models import (
    Checkout,
    NewsletterSignup,
    ProductEditEvent,
    RegisterCloseStatement,
    Sale,
    StockEvent,
    StockEventType,
)


def checkout_key(checkout: Checkout) -> str:
    return checkout.identifier


def sale_key(sale: Sale) -> str:
    return sale.identifier


def statement_key(statement: RegisterCloseStatement) -> str:
    return f"{statement.register.identifier}:{statement.sequence_number}"


def product_event_key(event: ProductEditEvent) -> str:
    return f"{event.product_id}:{event.pk}"


def signup_key(signup: NewsletterSignup) -> str:
    return f"signup-{signup.pk}"


def stock_event_key(event: StockEvent) -> str:
    return f"stock-event-{event.pk}"


# --- A stock event as the spec's JSON (spec: Stock event) --------------------------------------------------


def number(value: Decimal) -> int | Decimal:
    """A stored quantity (6 places) as the number it is: ``-2``, not ``-2.000000``."""
    return int(value) if value == value.to_integral_value() else value.normalize()


def iso_utc(value: datetime) -> str:
    spec = "milliseconds" if value.microsecond else "seconds"
    return value.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")


def stock_event_json(event: StockEvent) -> dict[str, Any]:
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
