"""The order import bodies declared once (issue 13, declared bodies): validation and request schema in one.

Spec: Incoming order, External order, Basket, LineItem, Discount, Customer, Payment, Shipping. These classes
check exactly as ``orders.definitions.INCOMING_ORDER`` and ``EXTERNAL_ORDER`` (same cleaned value, errors and
warnings; ``tests/core/test_declare.py`` holds them side by side) and are what ``/api/schema/`` can publish for
``/imports/incoming_orders`` and ``/imports/external_orders``. The endpoints still validate with the ``Obj``
definitions until the apps move over (``docs/notes/declared.md``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from core.declare import Body, Field, optional, rule
from core.nodes import Arr, Currency, Enum, Int, L10nString, Num, Report, Str, Url, join

MAX_LINE_ITEMS = 1000
MAX_DISCOUNTS = 100

LINE_ITEM_DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "new_price", "new_price_per_item")
BASKET_DISCOUNT_TYPES = ("amount", "percentage", "new_price")
PER_ITEM_ONLY = {
    t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
}


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
    """Spec: Shipping, address. `name`, `country` and `country_code` come from the general order model."""

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

    @rule
    def shipping_needs_payment(order: dict[str, Any], path: str, report: Report) -> None:
        """`shipping` requires `payment`: a Ship from Store order is pre-paid."""
        # Decided: rejected, so that an integrator learns of it instead of seeing the order handled as
        # Reserve & Collect.
        if "shipping" in order and "payment" not in order:
            report.error(
                join(path, "shipping"),
                "shipping requires payment (a Ship from Store order is pre-paid); "
                "send payment.reference or leave shipping out",
                "shipping_without_payment",
            )


class ExternalOrder(Body):
    """Spec: External order."""

    order_identifier = Str()
    basket = Basket
    customer = optional(ExternalCustomer)


# The request bodies of the endpoints (documentation: the view checks the items one by one, so that one bad
# item refuses only itself).
class IncomingOrdersRequest(Body, schema_name="IncomingOrders"):
    """Each order is checked on its own: the valid ones are queued, the others listed in `failed`."""

    orders = Arr(IncomingOrder, min_items=1, max_items=settings.IMPORT_MAX_ITEMS)


class ExternalOrdersRequest(Body, schema_name="ExternalOrders"):
    """Each order is checked on its own: the valid ones are queued, the others listed in `failed`."""

    external_orders = Arr(ExternalOrder, min_items=1, max_items=settings.IMPORT_MAX_ITEMS)
