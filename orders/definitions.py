"""The order bodies, declared once (``core.declare``) for every door orders come in by: each class validates
(cleaned value, every error with its field path and code, unknown fields as warnings) and is the request schema
``/api/schema/`` publishes.

* the import endpoints (spec: Incoming order, External order, Basket, LineItem, Discount, Customer, Payment,
  Shipping, Outgoing order state change); ``imports.bodies`` wraps them in the requests' envelopes;
* the POS order endpoints (spec: Order, general model; Order states; Cashier). The basket of an order a shop
  places is the ledger's ``SALE_SUMMARY`` node, because it carries the full sale.summary shape, and the Cashier
  is the ledger's.
"""

from __future__ import annotations

from typing import Any

from core.declare import Body, Choices, Field, optional, rule
from core.nodes import Arr, Components, Currency, Enum, Int, L10nString, Node, Num, Report, Schema, Str, Url, join
from ledger import definitions as ledger_definitions
from orders.models import OrderState

MAX_LINE_ITEMS = 1000
MAX_DISCOUNTS = 100

LINE_ITEM_DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "new_price", "new_price_per_item")
BASKET_DISCOUNT_TYPES = ("amount", "percentage", "new_price")
PER_ITEM_ONLY = {
    t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
}

STOCK_LOCATION_IDENTIFIER = Str(max_length=64)


@rule
def shipping_needs_payment(order: dict[str, Any], path: str, report: Report) -> None:
    """`shipping` requires `payment`: a Ship from Store order is pre-paid."""
    # Spec: shipping is "meaningful only together with payment". Decided: refused, so that an integrator (or a
    # shop) learns of it instead of seeing the order handled as Reserve & Collect.
    if "shipping" in order and "payment" not in order:
        report.error(
            join(path, "shipping"),
            "shipping requires payment (a Ship from Store order is pre-paid); "
            "send payment.reference or leave shipping out",
            "shipping_without_payment",
        )


# --- Imported orders (spec: Incoming order, External order, Basket, LineItem, Discount, Payment, Shipping) ---


class LineItemDiscount(Body, schema_name="OrderLineItemDiscount"):
    """Spec: Discount, on a line item."""

    name = Str()
    type = Enum(LINE_ITEM_DISCOUNT_TYPES)
    amount = Field(Num(minimum=0), description="An amount, a new price, or for `percentage` a fraction (0.1 = 10%).")

    @rule
    def percentage_between_0_and_1(discount: dict[str, Any], path: str, report: Report) -> None:
        """A `percentage` discount's `amount` lies between 0 and 1."""
        if discount.get("type") == "percentage" and not 0 <= discount["amount"] <= 1:
            report.error(join(path, "amount"), "a percentage discount must be between 0 and 1", "out_of_range")


class BasketDiscount(LineItemDiscount, schema_name="OrderBasketDiscount"):
    """Spec: Discount, on the whole basket (no per-item types)."""

    type = Enum(BASKET_DISCOUNT_TYPES, hints=PER_ITEM_ONLY)


class LineItem(Body, schema_name="OrderLineItem"):
    """Spec: LineItem."""

    product_identifier = Str()
    variant_identifier = optional(Str())
    barcode = optional(Str())
    image_url = optional(Url())
    name = Str(max_length=1000)
    quantity = Int(minimum=1)
    price = Field(Num(positive=True), description="The unit price, VAT included, before the discounts.")
    discounts = optional(Arr(LineItemDiscount, max_items=MAX_DISCOUNTS))


class Basket(Body, schema_name="OrderBasket"):
    """Spec: Basket."""

    currency = Currency()
    line_items = Arr(LineItem, min_items=1, max_items=MAX_LINE_ITEMS)
    discounts = optional(Arr(BasketDiscount, max_items=MAX_DISCOUNTS))


class IncomingCustomer(Body, schema_name="IncomingOrderCustomer"):
    """Spec: Incoming order, customer."""

    customer_identifier = optional(Str())
    name = optional(Str(max_length=1000))
    phone_number = optional(Str(max_length=64))
    email = optional(Str(max_length=320))


class ExternalCustomer(Body, schema_name="ExternalOrderCustomer"):
    """Spec: External order, customer."""

    customer_identifier = Str()
    name = optional(Str(max_length=1000))


class Payment(Body, schema_name="OrderPayment"):
    """Spec: Payment. Its presence makes a Ship from Store order pre-paid."""

    reference = Str(max_length=1000)


class ShippingAddress(Body, schema_name="OrderShippingAddress"):
    """Spec: Shipping, address. `name`, `country` and `country_code` come from the general order model (accepted
    on import so that nothing the integrator sends is lost)."""

    street = optional(Str(max_length=1000, allow_blank=True))
    city = optional(Str(allow_blank=True))
    postal_code = optional(Str(max_length=32, allow_blank=True))
    name = optional(Str(max_length=1000, allow_blank=True))
    country = optional(Str(allow_blank=True))
    country_code = optional(Str(max_length=2, allow_blank=True))


class Shipping(Body, schema_name="OrderShipping"):
    """Spec: Shipping."""

    address = optional(ShippingAddress)
    method_id = optional(Str())
    method_title = optional(L10nString())
    method_subtitle = optional(L10nString())


class IncomingOrder(Body):
    """Spec: Incoming order. `order_identifier` is unique per stock location."""

    order_identifier = Str()
    basket = Basket
    customer = optional(IncomingCustomer)
    payment = optional(Payment)
    shipping = optional(Shipping)
    shipping_needs_payment = shipping_needs_payment


class ExternalOrder(Body):
    """Spec: External order."""

    order_identifier = Str()
    basket = Basket
    customer = optional(ExternalCustomer)


# --- Outgoing order state change (spec: Outgoing order state change, Cashier) ---------------------------


class OutgoingOrderStateChange(Body):
    """Spec: Outgoing order state change: an integrator moves an order this service placed with it."""

    stock_location = STOCK_LOCATION_IDENTIFIER
    order_identifier = Str()
    state = Choices(OrderState.choices)
    comment = optional(Str(max_length=10_000, allow_blank=True))
    cashier = optional(ledger_definitions.CASHIER)


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

    def json_schema(self, components: Components) -> Schema:
        return {
            "oneOf": [self.identifier.json_schema(components), ledger_definitions.CASHIER.json_schema(components)],
            "description": "A Cashier object, or the identifier of a cashier of the account.",
        }


class IncomingOrderStateChange(Body, schema_name="PosIncomingOrderStateChange"):
    """Spec: Order states: a shop moves one of its incoming orders."""

    state = Choices(OrderState.choices)
    comment = optional(Str(max_length=10_000, allow_blank=True))
    cashier = optional(CashierOrIdentifier())


class OrderShipping(Shipping, schema_name="PosOrderShipping"):
    """Spec: Shipping (incoming order), in its general-order-model form: the address is required and the method
    texts are plain strings, since the receiving shop shows them as they are."""

    address = Field(ShippingAddress)
    method_title = optional(Str(max_length=1000))
    method_subtitle = optional(Str(max_length=1000))


class Order(Body, schema_name="PosOrder"):
    """Spec: Order, general model; the basket is the full sale.summary shape."""

    order_identifier = Str()
    basket = ledger_definitions.SALE_SUMMARY
    customer = optional(IncomingCustomer)
    payment = optional(Payment)
    shipping = optional(OrderShipping)
    shipping_needs_payment = shipping_needs_payment


class OutgoingOrder(Body, schema_name="PosOutgoingOrder"):
    """An order a shop places, with another shop of the account or with the external system."""

    stock_location = STOCK_LOCATION_IDENTIFIER
    destination = Field(
        STOCK_LOCATION_IDENTIFIER,
        description="A stock location identifier of the account, or `external` for the integrated external system.",
    )
    order = Order
