"""The spec's POS models as validation schemas (spec: Sale, Discount Summary, Tax Summary, Checkout).

Field names, types and required fields, with the exact path of every error; the rules across fields (a
sale or a return, never both; totals that must add up; shipping per ``ecom_id``) are ``rules`` attached
to the nodes. ``SALE_SUMMARY`` is the one validated node for the spec's ``sale.summary`` shape, used for
a checkout's sale parts and for the basket of orders a shop places.
"""

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
    Node,
    Num,
    Obj,
    Report,
    Str,
    Url,
    join,
)

MAX_LINE_ITEMS = 1000
MAX_PAYMENTS = 100
MAX_SALES_PER_CHECKOUT = 10

ID = Str()
TEXT = Str(max_length=10_000, allow_blank=True)
OPTIONAL_TEXT = Str(allow_blank=True)
AMOUNT = Num()  # amounts may be negative: returns, expenses, cashback, cash rounding


class AnyObject(Node):
    """A free-form object whose content the spec does not show (payment metadata, reports)."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        return value


class AnyArray(Node):
    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, list):
            return self.wrong_type("an array", value, path, report)
        return value


class MapOf(Node):
    """An object with free keys (identifiers), each value checked by ``value``."""

    def __init__(self, value: Node, *, max_items: int = 1000) -> None:
        self.value = value
        self.max_items = max_items

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        if len(value) > self.max_items:
            return report.error(path, f"must have at most {self.max_items} keys", "too_long")
        out = {}
        ok = True
        for key, element in value.items():
            cleaned = self.value.check(element, join(path, str(key)[:100]), report)
            ok = ok and cleaned is not INVALID
            out[key] = cleaned
        return out if ok else INVALID


class OneKeyOf(Node):
    """An object with exactly one key out of ``fields`` (spec: ``application``, ``mode``, ``type``)."""

    def __init__(self, fields: dict[str, Node]) -> None:
        self.fields = fields

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        keys = [k for k in value if value[k] is not None]
        if len(keys) != 1:
            return report.error(path, f"must have exactly one of: {', '.join(self.fields)}", "exactly_one")
        key = keys[0]
        node = self.fields.get(key)
        if node is None:
            return report.error(
                join(path, str(key)[:100]), f"must be one of: {', '.join(self.fields)}", "invalid_choice"
            )
        cleaned = node.check(value[key], join(path, key), report)
        return INVALID if cleaned is INVALID else {key: cleaned}


class NumberOrObject(Node):
    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, dict):
            return value
        return AMOUNT.check(value, path, report)


class Literal(Node):
    def __init__(self, expected: Any) -> None:
        self.expected = expected

    def check(self, value: Any, path: str, report: Report) -> Any:
        if value != self.expected or type(value) is not type(self.expected):
            return report.error(path, f"must be {str(self.expected).lower()}", "invalid")
        return value


# --- Shared pieces -----------------------------------------------------------------------------------

TAX_TYPE = Enum(("vat", "sales_tax"))


def _tax_name_required(obj: dict[str, Any], path: str, report: Report) -> None:
    # Spec: Tax Summary names it ``tax_name``; the sale example uses ``name``. Either is accepted.
    if "tax_name" not in obj and "name" not in obj:
        report.error(join(path, "tax_name"), "is required (tax_name, or name)", "required")


TAX_SUMMARY = Obj(
    {"amount": AMOUNT, "rate": Num(minimum=0, maximum=100), "tax_name": ID, "name": ID, "type": TAX_TYPE},
    required=("amount", "rate", "type"),
    rules=(_tax_name_required,),
)

INDEX = Int(minimum=0, maximum=1_000_000)


def _index_or_range(obj: dict[str, Any], path: str, report: Report) -> None:
    if "index" in obj:
        if "start_index" in obj or "end_index" in obj:
            report.error(path, "has either index or start_index and end_index, not both", "exactly_one")
    elif "start_index" not in obj or "end_index" not in obj:
        report.error(path, "needs index, or start_index and end_index", "required")
    elif obj["start_index"] > obj["end_index"]:
        report.error(join(path, "end_index"), "must not be less than start_index", "out_of_range")


ITEM_RANGE = Obj({"index": INDEX, "start_index": INDEX, "end_index": INDEX}, rules=(_index_or_range,))
DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "percentage_with_max", "new_price", "new_price_per_item")

DISCOUNT = Obj(
    {
        "id": ID,
        "name": L10nString(),
        "application": OneKeyOf(
            {
                "basket": Literal(True),
                "line_item": ID,
                "line_items": MapOf(ITEM_RANGE),
            }
        ),
        "mode": OneKeyOf(
            {
                "manual": Literal(True),
                "automatic": Obj(
                    {"domain": Enum(("KX_SALE_PRICE_DOMAIN", "KX_PROMOTION_DOMAIN")), "identifier": ID},
                    required=("domain", "identifier"),
                ),
            }
        ),
        "type": OneKeyOf({name: NumberOrObject() for name in DISCOUNT_TYPES}),
        "trigger": Obj(
            {"items": Enum(("basket", "line_item", "items")), "count": Num(minimum=0)},
            required=("items",),
        ),
    },
    required=("id", "application", "mode", "type"),
)

DISCOUNT_SUMMARY = Obj({"amount": AMOUNT, "discount": DISCOUNT}, required=("amount", "discount"))

ADDRESS = Obj(
    {
        "city": OPTIONAL_TEXT,
        "country": OPTIONAL_TEXT,
        "country_code": Str(max_length=2, allow_blank=True),
        "name": OPTIONAL_TEXT,
        "postal_code": OPTIONAL_TEXT,
        "street": Str(max_length=1000, allow_blank=True),
    }
)

BEHAVIORS: dict[str, Obj] = {
    "shipping": Obj(
        {
            "address": ADDRESS,
            "customer_info": Obj({"email": OPTIONAL_TEXT, "phone": OPTIONAL_TEXT}),
            "method_id": ID,
        }
    ),
    "giftcard": Obj(
        {"code": ID, "integration_id": ID, "payment_type_id": Enum(("giftcard.integration",)), "report": AnyObject()},
        required=("code", "integration_id"),
    ),
    "voucher": Obj(
        {"code": ID, "integration_id": ID, "payment_type_id": Enum(("voucher.integration",)), "report": AnyObject()},
        required=("code", "integration_id"),
    ),
    "giftcard_use": Obj(
        {"code": ID, "integration_id": ID, "payment_type_id": Enum(("giftcard.integration",))},
        required=("code", "integration_id"),
    ),
    "voucher_use": Obj(
        {"code": ID, "integration_id": ID, "payment_type_id": Enum(("voucher.integration",))},
        required=("code", "integration_id"),
    ),
    "expense": Obj(
        {"identifier": ID, "image_urls": Arr(Url(), max_items=100)},
        required=("identifier", "image_urls"),
    ),
    "customer_account_deposit": Obj(
        {"customer_id": ID, "payment_type_id": ID}, required=("customer_id", "payment_type_id")
    ),
    "container_deposit": Obj(
        {"product_id": ID, "tag": ID, "rule_id": ID, "parent_line_item_id": ID},
        required=("product_id", "tag", "rule_id", "parent_line_item_id"),
    ),
}


class Behavior(Node):
    """Spec: line item ``behavior``, at most one of the 8 keys."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        keys = [k for k in value if value[k] is not None]
        unknown = [k for k in keys if k not in BEHAVIORS]
        if unknown:
            return report.error(
                join(path, str(unknown[0])[:100]), f"must be one of: {', '.join(BEHAVIORS)}", "invalid_choice"
            )
        if len(keys) > 1:
            return report.error(path, f"has at most one behavior, not {len(keys)} ({', '.join(keys)})", "one_behavior")
        if not keys:
            return {}
        key = keys[0]
        cleaned = BEHAVIORS[key].check(value[key], join(path, key), report)
        return INVALID if cleaned is INVALID else {key: cleaned}


DIMENSION = Obj(
    {
        "id": ID,
        "name": L10nString(),
        "value": Obj(
            {"id": ID, "name": L10nString(), "color": Str(max_length=7)},
            required=("id", "name"),
        ),
    },
    required=("id",),
)

LINE_ITEM = Obj(
    {
        "base_price": AMOUNT,
        "retail_price": AMOUNT,
        "sales_tax_amount": AMOUNT,
        "sub_total": AMOUNT,
        "total": AMOUNT,
        "total_tax_amount": AMOUNT,
        "vat_amount": AMOUNT,
        "quantity": AMOUNT,
        "line_item_id": ID,
        "barcode": ID,
        "cost_price": AMOUNT,
        "ecom_id": ID,
        "id": ID,
        "image_url": Url(),
        "product_group": ID,
        "variant_id": ID,
        "comment": TEXT,
        "margin": AMOUNT,
        "margin_total": AMOUNT,
        "name": L10nString(),
        "behavior": Behavior(),
        "dimensions": Arr(DIMENSION, max_items=50),
        "discounts": Arr(DISCOUNT_SUMMARY, max_items=100),
        "tags": Arr(ID, max_items=100),
        "taxes": Arr(TAX_SUMMARY, max_items=20),
    },
    required=(
        "base_price",
        "retail_price",
        "sales_tax_amount",
        "sub_total",
        "total",
        "total_tax_amount",
        "vat_amount",
        "quantity",
        "line_item_id",
    ),
)

SALE_CUSTOMER = Obj(
    {
        "identifier": ID,
        "name": Str(max_length=1000, allow_blank=True),
        "street": Str(max_length=1000, allow_blank=True),
        "city": OPTIONAL_TEXT,
        "postal_code": OPTIONAL_TEXT,
        "country": OPTIONAL_TEXT,
        "country_code": Str(max_length=2, allow_blank=True),
        "email": Str(max_length=320, allow_blank=True),
        "phone": Str(max_length=64, allow_blank=True),
        "organization_number": OPTIONAL_TEXT,
    },
    required=("identifier",),
)

SALE_SUMMARY_FIELDS: dict[str, Node] = {
    "base_price": AMOUNT,
    "sales_tax_amount": AMOUNT,
    "sub_total": AMOUNT,
    "total": AMOUNT,
    "total_discounts": AMOUNT,
    "total_tax_amount": AMOUNT,
    "vat_amount": AMOUNT,
    "comment": TEXT,
    "return_reference": ID,
    "customer": SALE_CUSTOMER,
    "is_return": Bool(),
    "line_items": Arr(LINE_ITEM, max_items=MAX_LINE_ITEMS),
    "margin": AMOUNT,
    "margin_total": AMOUNT,
    "purchase_type": Obj({"name": ID, "identifier": ID}, required=("name", "identifier")),
    "taxes": Arr(TAX_SUMMARY, max_items=100),
}
SALE_SUMMARY_REQUIRED = (
    "base_price",
    "sales_tax_amount",
    "sub_total",
    "total",
    "total_discounts",
    "total_tax_amount",
    "vat_amount",
    "is_return",
    "line_items",
    "taxes",
)
SALE_SUMMARY = Obj(SALE_SUMMARY_FIELDS, required=SALE_SUMMARY_REQUIRED)

PAYMENT = Obj(
    {
        "amount": AMOUNT,
        "foreign_currency": Currency(),
        "foreign_currency_amount": AMOUNT,
        "identifier": ID,
        "payment_type": ID,
        "success": Bool(),
        "error": TEXT,
        "metadata": AnyObject(),
        "receipts": AnyArray(),
    },
    required=("amount", "identifier", "payment_type", "success"),
)

RECEIPT_METADATA = Obj(
    {
        "footer": TEXT,
        "header": TEXT,
        "shop_address": Obj(
            {"city": OPTIONAL_TEXT, "name": OPTIONAL_TEXT, "street": OPTIONAL_TEXT, "zip": OPTIONAL_TEXT}
        ),
        "vat_number": OPTIONAL_TEXT,
    }
)

SOURCE = Obj(
    {
        name: Str(max_length=255)
        for name in (
            "market_id",
            "market_name",
            "shop_id",
            "shop_name",
            "register_id",
            "register_name",
            "cashier_id",
            "cashier_name",
        )
    },
    required=("register_id",),
)

TIMING = Obj(
    {
        "timestamp": Num(minimum=0),
        "timestamp_string": Str(max_length=64),
        "timezone": Str(max_length=64),
        "timestamp_date_string": Str(max_length=32),
        "timestamp_week_string": Str(max_length=16),
    },
    required=("timestamp",),
)

CASHIER = Obj(
    {
        "display_name": Str(max_length=64),
        "full_name": Str(max_length=1000),
        "identifier": ID,
        "image_url": Url(https_only=True),
    },
    required=("display_name", "identifier"),
)
