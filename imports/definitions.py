"""The spec's import models (Resources and their fields) as validation schemas."""

from __future__ import annotations

from typing import Any

from imports.schema import (
    INVALID,
    Arr,
    Bool,
    Currency,
    Enum,
    Int,
    L10nString,
    MarketPrice,
    Num,
    Obj,
    Report,
    Str,
    Url,
    exactly_one_of,
    join,
)
from orders.models import OrderState

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


def _shipping_needs_payment(obj: dict[str, Any], path: str, report: Report) -> None:
    # Spec: shipping is "meaningful only together with payment". Decided: rejected, so that an
    # integrator learns of it instead of seeing the order handled as Reserve & Collect.
    if "shipping" in obj and "payment" not in obj:
        report.error(
            join(path, "shipping"),
            "shipping requires payment (a Ship from Store order is pre-paid); "
            "send payment.reference or leave shipping out",
            "shipping_without_payment",
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
    rules=(_shipping_needs_payment,),
)

EXTERNAL_ORDER = Obj(
    {"order_identifier": ORDER_IDENTIFIER, "basket": BASKET, "customer": EXTERNAL_CUSTOMER},
    required=("order_identifier", "basket"),
)

# --- Outgoing order state change (spec: Outgoing order state change, Cashier) -------------------------

CASHIER = Obj(
    {
        "display_name": Str(max_length=64),
        "full_name": Str(max_length=1000),
        "identifier": Str(),
        "image_url": Url(https_only=True),
    },
    required=("display_name", "identifier"),
)

OUTGOING_ORDER_STATE_CHANGE = Obj(
    {
        "stock_location": Str(max_length=64),
        "order_identifier": ORDER_IDENTIFIER,
        "state": Enum(OrderState.values),
        "comment": Str(max_length=10_000, allow_blank=True),
        "cashier": CASHIER,
    },
    required=("stock_location", "order_identifier", "state"),
)

# --- Discount campaigns (spec: Discount campaign, rules 1-3) -----------------------------------------

CAMPAIGN_ID_FORBIDDEN = "./#$*[]"
PERCENTAGE = Num(minimum=0, maximum=1)
COUNT = Int(minimum=1)
NEW_PRICE = MarketPrice()
NEW_PRICE_FIELDS = {"new_price_per_item": NEW_PRICE, "new_price_per_item_if_cheaper": NEW_PRICE}
ONE_NEW_PRICE = exactly_one_of("new_price_per_item", "new_price_per_item_if_cheaper")


def _distinct_step_counts(obj: dict[str, Any], path: str, report: Report) -> None:
    seen: set[int] = set()
    for i, step in enumerate(obj.get("steps", [])):
        if step["count"] in seen:
            report.error(join(path, f"steps[{i}].count"), f"count {step['count']} appears in two steps", "duplicate")
        seen.add(step["count"])


def _stairs(step_fields: dict[str, Any], **options: Any) -> Arr:
    return Arr(Obj({"count": COUNT, **step_fields}, **options), min_items=1, max_items=100)


CAMPAIGN_COMMON = Obj(
    {
        "id": Str(forbidden=CAMPAIGN_ID_FORBIDDEN),
        "type": Str(),  # checked against CAMPAIGN_TYPES by the caller, to pick the type's schema
        "name": Str(max_length=1000),
        "display_name": Str(max_length=1000),
        "priority": Num(),
        "members_only": Bool(),
        "continue_evaluation": Bool(),
    },
    required=("id", "type", "name", "display_name", "priority"),
)

STR_ID = Str()
CAMPAIGN_TYPES: dict[str, Obj] = {
    "percentage_discount-count_or_more-single_product": CAMPAIGN_COMMON.extend(
        {"product_id": STR_ID, "percentage": PERCENTAGE, "count": COUNT},
        required=("product_id", "percentage", "count"),
    ),
    "percentage_discount-count_or_more-multiple_products": CAMPAIGN_COMMON.extend(
        {"product_ids": Arr(STR_ID, min_items=1, max_items=10_000), "percentage": PERCENTAGE, "count": COUNT},
        required=("product_ids", "percentage", "count"),
    ),
    "percentage_discount-tag": CAMPAIGN_COMMON.extend(
        {"tag": STR_ID, "percentage": PERCENTAGE},
        required=("tag", "percentage"),
    ),
    "percentage_discount-count_or_more-tag": CAMPAIGN_COMMON.extend(
        {"tag": STR_ID, "percentage": PERCENTAGE, "count": COUNT},
        required=("tag", "percentage", "count"),
    ),
    "new_price_discount-single_product": CAMPAIGN_COMMON.extend(
        {"product_id": STR_ID, **NEW_PRICE_FIELDS},
        required=("product_id",),
        rules=(ONE_NEW_PRICE,),
    ),
    "new_price_discount-count_or_more-single_product": CAMPAIGN_COMMON.extend(
        {"product_id": STR_ID, "count": COUNT, **NEW_PRICE_FIELDS},
        required=("product_id", "count"),
        rules=(ONE_NEW_PRICE,),
    ),
    "new_price_discount-stair-single_product": CAMPAIGN_COMMON.extend(
        {
            "product_id": STR_ID,
            "steps": _stairs(NEW_PRICE_FIELDS, required=("count",), rules=(ONE_NEW_PRICE,)),
        },
        required=("product_id", "steps"),
        rules=(_distinct_step_counts,),
    ),
    "percentage_discount-stair-single_product": CAMPAIGN_COMMON.extend(
        {
            "product_id": STR_ID,
            "steps": _stairs({"percentage": PERCENTAGE}, required=("count", "percentage")),
        },
        required=("product_id", "steps"),
        rules=(_distinct_step_counts,),
    ),
    "percentage_discount-stair-tag": CAMPAIGN_COMMON.extend(
        {"tag": STR_ID, "steps": _stairs({"percentage": PERCENTAGE}, required=("count", "percentage"))},
        required=("tag", "steps"),
        rules=(_distinct_step_counts,),
    ),
    "amount_discount-stair-tag": CAMPAIGN_COMMON.extend(
        {
            "tag": STR_ID,
            # Money, so a MarketPrice like new prices (spec rule 3) as well as a plain number.
            "steps": _stairs({"amount_per_item": MarketPrice(positive=True)}, required=("count", "amount_per_item")),
        },
        required=("tag", "steps"),
        rules=(_distinct_step_counts,),
    ),
    "free_shipping_by_amount": CAMPAIGN_COMMON.extend(
        {"amount_condition": MarketPrice()},
        required=("amount_condition",),
    ),
}
CAMPAIGN_TYPE = Enum(CAMPAIGN_TYPES)

# --- Product rules (spec: Product rule) ---------------------------------------------------------------

PRODUCT_RULE = Obj(
    {
        "id": Str(),
        "type": Enum(("container_deposit",)),
        "name": Str(max_length=1000),
        "display_name": L10nString(),
        "tag": Str(),
        "product_group": Str(),
        "price": MarketPrice(),
    },
    required=("id", "type", "name", "display_name", "tag", "price"),
)


def check_campaign(value: Any, path: str, report: Report) -> Any:
    """A campaign is checked against the schema of its own type."""
    kind = value.get("type") if isinstance(value, dict) else None
    schema = CAMPAIGN_TYPES.get(kind) if isinstance(kind, str) else None
    if schema is not None:
        return schema.check(value, path, report)
    CAMPAIGN_COMMON.check(value, path, report)
    if isinstance(kind, str):
        CAMPAIGN_TYPE.check(kind, join(path, "type"), report)
    return INVALID
