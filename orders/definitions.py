"""Request bodies of the POS order endpoints as validation schemas (spec: Order, general model; Order state;
Cashier). The nodes come from ``imports.schema``; the basket is the ledger's ``SALE_SUMMARY`` node, because
an order a shop places carries the full sale.summary shape.
"""

from __future__ import annotations

from typing import Any

from imports import definitions as import_definitions
from imports.schema import Enum, Node, Obj, Report, Str, join
from ledger import definitions as ledger_definitions
from orders.models import OrderState

STOCK_LOCATION_IDENTIFIER = Str(max_length=64)


class CashierOrIdentifier(Node):
    """The spec's Cashier object, or the identifier of a cashier of the account (resolved by the service)."""

    identifier = Str(max_length=64)

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, str):
            return self.identifier.check(value, path, report)
        if isinstance(value, dict):
            return ledger_definitions.CASHIER.check(value, path, report)
        return self.wrong_type("a Cashier object or a cashier identifier", value, path, report)


INCOMING_ORDER_STATE_CHANGE = Obj(
    {
        "state": Enum(OrderState.values),
        "comment": Str(max_length=10_000, allow_blank=True),
        "cashier": CashierOrIdentifier(),
    },
    required=("state",),
)

# Spec, "Shipping (incoming order)" in its general-order-model form: the address is required there and the
# method texts are plain strings, since the receiving shop shows them as they are.
ORDER_SHIPPING = Obj(
    {
        "address": import_definitions.SHIPPING_ADDRESS,
        "method_id": Str(),
        "method_title": Str(max_length=1000),
        "method_subtitle": Str(max_length=1000),
    },
    required=("address",),
)


def _shipping_needs_payment(obj: dict[str, Any], path: str, report: Report) -> None:
    # Spec: shipping is "meaningful only together with payment"; refused as the incoming order import does,
    # so that a shop never places an order that would silently be handled as Reserve & Collect.
    if "shipping" in obj and "payment" not in obj:
        report.error(
            join(path, "shipping"),
            "shipping requires payment (a Ship from Store order is pre-paid); "
            "send payment.reference or leave shipping out",
            "shipping_without_payment",
        )


ORDER = Obj(
    {
        "order_identifier": import_definitions.ORDER_IDENTIFIER,
        "basket": ledger_definitions.SALE_SUMMARY,
        "customer": import_definitions.INCOMING_CUSTOMER,
        "payment": import_definitions.PAYMENT,
        "shipping": ORDER_SHIPPING,
    },
    required=("order_identifier", "basket"),
    rules=(_shipping_needs_payment,),
)

OUTGOING_ORDER = Obj(
    {
        "stock_location": STOCK_LOCATION_IDENTIFIER,
        # A stock location identifier of the account, or "external" for the integrated external system.
        "destination": STOCK_LOCATION_IDENTIFIER,
        "order": ORDER,
    },
    required=("stock_location", "destination", "order"),
)
