"""The order bodies, declared once (``core.declare``) for every endpoint orders come in by: each class validates
(cleaned value, every error with its field path and code, unknown fields as warnings) and is the request schema
``/api/schema/`` publishes.

* the import endpoints (spec: Incoming order, External order, Basket, LineItem, Discount, Customer, Payment,
  Shipping, Outgoing order state change); ``imports.bodies`` wraps them in the requests' envelopes;
* the POS order endpoints (spec: Order, general model; Order states; Cashier). The basket of an order a shop
  places is the ledger's ``SaleSummary``, because it carries the full sale.summary shape, and the Cashier is the
  ledger's.
"""

from __future__ import annotations

from typing import Any

from core.declare import Body, Choices, Field, optional, rule
from core.nodes import Arr, Components, Currency, Enum, Int, L10nString, Node, Num, Report, Schema, Str, Url, join
from ledger.bodies.checkouts import SaleSummary
from ledger.bodies.registers import Cashier
from orders.models import OrderState

MAX_LINE_ITEMS = 1000
MAX_DISCOUNTS = 100

LINE_ITEM_DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "new_price", "new_price_per_item")
BASKET_DISCOUNT_TYPES = ("amount", "percentage", "new_price")
PER_ITEM_ONLY = {
    t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
}

STOCK_LOCATION_IDENTIFIER = Str(max_length=64)
COMMENT = Str(max_length=10_000, allow_blank=True)
# The spec's optional customer and line item texts ("string | no") take a blank, kept as sent.
OPTIONAL_NAME = "Shown to users (blank allowed, at most 1000 characters)."
# An order's new state, as an integrator (outgoing orders) and a shop (incoming orders) send it.
NEW_STATE = Field(
    Choices(OrderState.choices),
    description="The new state: `created`, `processing`, `ready`, `completed`, `rejected` or `cancelled`.",
)


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

    name = Field(Str(), description="The discount's name, shown to the user (1-255 characters).")
    type = Field(
        Enum(LINE_ITEM_DISCOUNT_TYPES),
        description=(
            "`amount` (off all units), `amount_per_item`, `percentage`, `new_price` (for all units) or "
            "`new_price_per_item`."
        ),
    )
    amount = Field(Num(minimum=0), description="An amount, a new price, or for `percentage` a fraction (0.1 = 10%).")

    @rule
    def percentage_between_0_and_1(discount: dict[str, Any], path: str, report: Report) -> None:
        """A `percentage` discount's `amount` lies between 0 and 1."""
        if discount.get("type") == "percentage" and not 0 <= discount["amount"] <= 1:
            report.error(join(path, "amount"), "a percentage discount must be between 0 and 1", "out_of_range")


class BasketDiscount(LineItemDiscount, schema_name="OrderBasketDiscount"):
    """Spec: Discount, on the whole basket (no per-item types)."""

    type = Field(
        Enum(BASKET_DISCOUNT_TYPES, hints=PER_ITEM_ONLY),
        description="`amount`, `percentage` or `new_price` (the per-item types are for line items only).",
    )


class LineItem(Body, schema_name="OrderLineItem"):
    """Spec: LineItem."""

    product_identifier = Field(Str(), description="The product's id (1-255 characters).")
    variant_identifier = optional(
        Str(allow_blank=True), description="The variant's id, for a variant product (blank allowed)."
    )
    barcode = optional(Str(allow_blank=True), description="EAN, SKU, ISBN or similar (blank allowed).")
    image_url = optional(Url(), description="A png or jpg image (an http or https URL, at most 2048 characters).")
    name = Field(Str(max_length=1000), description="The product name shown to users (1-1000 characters).")
    quantity = Field(Int(minimum=1), description="Units, a positive integer.")
    price = Field(Num(positive=True), description="The unit price, VAT included, before the discounts.")
    discounts = optional(
        Arr(LineItemDiscount, max_items=MAX_DISCOUNTS),
        description="The discounts on this line (at most 100).",
    )


class Basket(Body, schema_name="OrderBasket"):
    """Spec: Basket."""

    currency = Field(Currency(), description="ISO 4217 code of every amount of the order (e.g. `DKK`).")
    line_items = Field(Arr(LineItem, min_items=1, max_items=MAX_LINE_ITEMS), description="The lines (1 to 1000).")
    discounts = optional(
        Arr(BasketDiscount, max_items=MAX_DISCOUNTS),
        description="Discounts on the whole basket (at most 100).",
    )


class IncomingCustomer(Body, schema_name="IncomingOrderCustomer"):
    """Spec: Incoming order, customer."""

    customer_identifier = optional(Str(), description="The customer's id in the integrated system.")
    name = optional(Str(max_length=1000, allow_blank=True), description=OPTIONAL_NAME)
    phone_number = optional(
        Str(max_length=64, allow_blank=True), description="Shown to users (blank allowed, at most 64 characters)."
    )
    email = optional(
        Str(max_length=320, allow_blank=True),
        description="Shown to users (blank allowed, at most 320 characters; not checked as an address).",
    )


class ExternalCustomer(Body, schema_name="ExternalOrderCustomer"):
    """Spec: External order, customer."""

    customer_identifier = Field(Str(), description="The customer's id in the integrated system.")
    name = optional(Str(max_length=1000, allow_blank=True), description=OPTIONAL_NAME)


class Payment(Body, schema_name="OrderPayment"):
    """Spec: Payment. Its presence makes a Ship from Store order pre-paid."""

    reference = Field(
        Str(max_length=1000),
        description="The payment's reference in the external system (1-1000 characters).",
    )


class ShippingAddress(Body, schema_name="OrderShippingAddress"):
    """Spec: Shipping, address. `name`, `country` and `country_code` come from the general order model (accepted
    on import so that nothing the integrator sends is lost)."""

    street = optional(
        Str(max_length=1000, allow_blank=True),
        description="The street (blank allowed, at most 1000 characters).",
    )
    city = optional(Str(allow_blank=True), description="The city (blank allowed, at most 255 characters).")
    postal_code = optional(
        Str(max_length=32, allow_blank=True),
        description="The postal code (blank allowed, at most 32 characters).",
    )
    name = optional(
        Str(max_length=1000, allow_blank=True),
        description="The recipient's name (blank allowed, at most 1000 characters).",
    )
    country = optional(Str(allow_blank=True), description="The country's name (blank allowed).")
    country_code = optional(
        Str(max_length=2, allow_blank=True),
        description="ISO 3166-1 alpha-2 (at most 2 characters, blank allowed).",
    )


class Shipping(Body, schema_name="OrderShipping"):
    """Spec: Shipping."""

    address = optional(ShippingAddress, description="Where to ship; shown to the cashier handling the order.")
    method_id = optional(Str(), description="The delivery method's id.")
    method_title = optional(L10nString(), description="The delivery method, shown to the order handler (L10nString).")
    method_subtitle = optional(
        L10nString(),
        description="More about the delivery method, shown to the order handler (L10nString).",
    )


class IncomingOrder(Body):
    """Spec: Incoming order. `order_identifier` is unique per stock location."""

    order_identifier = Field(
        Str(),
        description="Unique across the incoming orders of the stock location (1-255 characters).",
    )
    basket = Field(Basket, description="What is ordered.")
    customer = optional(IncomingCustomer, description="Who ordered.")
    payment = optional(
        Payment,
        description="Pre-paid: Click & Collect, or Ship from Store with `shipping`; without it, Reserve & Collect.",
    )
    shipping = optional(Shipping, description="How to ship; requires `payment`.")
    shipping_needs_payment = shipping_needs_payment


class ExternalOrder(Body):
    """Spec: External order."""

    order_identifier = Field(
        Str(),
        description="Unique across the external orders of the stock location (1-255 characters).",
    )
    basket = Field(Basket, description="What is ordered.")
    customer = optional(ExternalCustomer, description="Who ordered.")


# --- Outgoing order state change (spec: Outgoing order state change, Cashier) ---------------------------


class OutgoingOrderStateChange(Body):
    """Spec: Outgoing order state change: an integrator moves an order this service placed with it."""

    stock_location = Field(
        STOCK_LOCATION_IDENTIFIER,
        description="The shop that placed the order (a stock location identifier, 1-64 characters).",
    )
    order_identifier = Field(Str(), description="The order's identifier on that stock location.")
    state = NEW_STATE
    comment = optional(COMMENT, description="A comment shown with the state (blank allowed, at most 10000 characters).")
    cashier = optional(Cashier, description="Who handled the order.")


# --- Orders placed by shops (the POS order endpoints) ------------------------------------------------------


class CashierOrIdentifier(Node):
    """The spec's Cashier object, or the identifier of a cashier of the account (resolved by the service)."""

    identifier = Str(max_length=64)

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, str):
            return self.identifier.check(value, path, report)
        if isinstance(value, dict):
            return Cashier.check(value, path, report)
        return self.wrong_type("a Cashier object or a cashier identifier", value, path, report)

    def json_schema(self, components: Components) -> Schema:
        return {
            "oneOf": [self.identifier.json_schema(components), Cashier.json_schema(components)],
            "description": "A Cashier object, or the identifier of a cashier of the account.",
        }


class IncomingOrderStateChange(Body, schema_name="PosIncomingOrderStateChange"):
    """Spec: Order states: a shop moves one of its incoming orders."""

    state = NEW_STATE
    comment = optional(COMMENT, description="A comment sent with the state (blank allowed, at most 10000 characters).")
    cashier = optional(CashierOrIdentifier(), description="Who handled the order.")


class OrderShipping(Shipping, schema_name="PosOrderShipping"):
    """Spec: Shipping (incoming order), in its general-order-model form: the address is required and the method
    texts are plain strings, since the receiving shop shows them as they are."""

    address = Field(ShippingAddress, description="Where to ship (required in this form).")
    method_title = optional(
        Str(max_length=1000),
        description="The delivery method, a plain string (at most 1000 characters).",
    )
    method_subtitle = optional(
        Str(max_length=1000),
        description="More about the delivery method, a plain string (at most 1000 characters).",
    )


class Order(Body, schema_name="PosOrder"):
    """Spec: Order, general model; the basket is the full sale.summary shape."""

    order_identifier = Field(
        Str(),
        description="The order's id, unique per placing stock location (1-255 characters).",
    )
    basket = Field(SaleSummary, description="What is ordered, in the full sale.summary shape.")
    customer = optional(IncomingCustomer, description="Who ordered.")
    payment = optional(Payment, description="Its presence makes the order pre-paid.")
    shipping = optional(OrderShipping, description="How to ship; requires `payment`.")
    shipping_needs_payment = shipping_needs_payment


class OutgoingOrder(Body, schema_name="PosOutgoingOrder"):
    """An order a shop places, with another shop of the account or with the external system."""

    stock_location = Field(
        STOCK_LOCATION_IDENTIFIER,
        description="The shop placing the order (a stock location identifier of the account).",
    )
    destination = Field(
        STOCK_LOCATION_IDENTIFIER,
        description="A stock location identifier of the account, or `external` for the integrated external system.",
    )
    order = Field(Order, description="The order.")
