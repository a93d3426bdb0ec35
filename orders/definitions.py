"""Order bodies as validation schemas, declared once for every door orders come in by: the import endpoints
(spec: Incoming order, External order, Basket, LineItem, Discount, Payment, Shipping, Outgoing order state
change) and the POS order endpoints (spec: Order, general model; Order state; Cashier). The nodes come from
``core.nodes``; the basket of an order a shop places is the ledger's ``SALE_SUMMARY`` node, because it carries
the full sale.summary shape, and the Cashier is the ledger's.
"""

from __future__ import annotations

from typing import Any

from core.nodes import Arr, Currency, Enum, Int, L10nString, Node, Num, Obj, Report, Str, Url, join
from ledger import definitions as ledger_definitions
from orders.models import OrderState

STOCK_LOCATION_IDENTIFIER = Str(max_length=64)


def shipping_needs_payment(obj: dict[str, Any], path: str, report: Report) -> None:
    """Spec: shipping is "meaningful only together with payment". Decided: refused, so that an integrator (or a
    shop) learns of it instead of seeing the order handled as Reserve & Collect."""
    if "shipping" in obj and "payment" not in obj:
        report.error(
            join(path, "shipping"),
            "shipping requires payment (a Ship from Store order is pre-paid); "
            "send payment.reference or leave shipping out",
            "shipping_without_payment",
        )


# --- Imported orders (spec: Incoming order, External order, Basket, LineItem, Discount, Payment, Shipping) ---

MAX_LINE_ITEMS = 1000
MAX_DISCOUNTS = 100

# --- Orders (spec: Incoming order, External order, Basket, LineItem, Discount, Payment, Shipping) -----

LINE_ITEM_DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "new_price", "new_price_per_item")
BASKET_DISCOUNT_TYPES = ("amount", "percentage", "new_price")


def _percentage_between_0_and_1(obj: dict[str, Any], path: str, report: Report) -> None:
    if obj.get("type") == "percentage" and not 0 <= obj["amount"] <= 1:
        report.error(join(path, "amount"), "a percentage discount must be between 0 and 1", "out_of_range")


def _discount(types: tuple[str, ...], hints: dict[str, str] | None = None) -> Obj:
    return Obj(
        {
            "name": Str(),
            "type": Enum(types, hints=hints),
            "amount": Num(minimum=0),
        },
        required=("name", "type", "amount"),
        rules=(_percentage_between_0_and_1,),
    )


LINE_ITEM_DISCOUNT = _discount(LINE_ITEM_DISCOUNT_TYPES)
BASKET_DISCOUNT = _discount(
    BASKET_DISCOUNT_TYPES,
    hints={
        t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
    },
)

LINE_ITEM = Obj(
    {
        "product_identifier": Str(),
        "variant_identifier": Str(),
        "barcode": Str(),
        "image_url": Url(),
        "name": Str(max_length=1000),
        "quantity": Int(minimum=1),
        "price": Num(positive=True),
        "discounts": Arr(LINE_ITEM_DISCOUNT, max_items=MAX_DISCOUNTS),
    },
    required=("product_identifier", "name", "quantity", "price"),
)

BASKET = Obj(
    {
        "currency": Currency(),
        "line_items": Arr(LINE_ITEM, min_items=1, max_items=MAX_LINE_ITEMS),
        "discounts": Arr(BASKET_DISCOUNT, max_items=MAX_DISCOUNTS),
    },
    required=("currency", "line_items"),
)

INCOMING_CUSTOMER = Obj(
    {
        "customer_identifier": Str(),
        "name": Str(max_length=1000),
        "phone_number": Str(max_length=64),
        "email": Str(max_length=320),
    }
)

EXTERNAL_CUSTOMER = Obj(
    {"customer_identifier": Str(), "name": Str(max_length=1000)},
    required=("customer_identifier",),
)

PAYMENT = Obj({"reference": Str(max_length=1000)}, required=("reference",))

SHIPPING_ADDRESS = Obj(
    {
        "street": Str(max_length=1000, allow_blank=True),
        "city": Str(allow_blank=True),
        "postal_code": Str(max_length=32, allow_blank=True),
        # The general order model adds these; accepted on import so nothing the integrator sends is lost.
        "name": Str(max_length=1000, allow_blank=True),
        "country": Str(allow_blank=True),
        "country_code": Str(max_length=2, allow_blank=True),
    }
)

SHIPPING = Obj(
    {
        "address": SHIPPING_ADDRESS,
        "method_id": Str(),
        "method_title": L10nString(),
        "method_subtitle": L10nString(),
    }
)


ORDER_IDENTIFIER = Str()

INCOMING_ORDER = Obj(
    {
        "order_identifier": ORDER_IDENTIFIER,
        "basket": BASKET,
        "customer": INCOMING_CUSTOMER,
        "payment": PAYMENT,
        "shipping": SHIPPING,
    },
    required=("order_identifier", "basket"),
    rules=(shipping_needs_payment,),
)

EXTERNAL_ORDER = Obj(
    {"order_identifier": ORDER_IDENTIFIER, "basket": BASKET, "customer": EXTERNAL_CUSTOMER},
    required=("order_identifier", "basket"),
)

# --- Outgoing order state change (spec: Outgoing order state change, Cashier) ---------------------------

OUTGOING_ORDER_STATE_CHANGE = Obj(
    {
        "stock_location": Str(max_length=64),
        "order_identifier": ORDER_IDENTIFIER,
        "state": Enum(OrderState.values),
        "comment": Str(max_length=10_000, allow_blank=True),
        "cashier": ledger_definitions.CASHIER,
    },
    required=("stock_location", "order_identifier", "state"),
)


# --- Orders placed by shops (the POS order endpoints) ------------------------------------------------------


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
        "address": SHIPPING_ADDRESS,
        "method_id": Str(),
        "method_title": Str(max_length=1000),
        "method_subtitle": Str(max_length=1000),
    },
    required=("address",),
)


ORDER = Obj(
    {
        "order_identifier": ORDER_IDENTIFIER,
        "basket": ledger_definitions.SALE_SUMMARY,
        "customer": INCOMING_CUSTOMER,
        "payment": PAYMENT,
        "shipping": ORDER_SHIPPING,
    },
    required=("order_identifier", "basket"),
    rules=(shipping_needs_payment,),
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
