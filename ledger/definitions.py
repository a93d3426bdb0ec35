"""The spec's POS models as validation schemas (spec: Sale, Discount Summary, Tax Summary, Checkout).

Field names, types and required fields, with the exact path of every error; the rules across fields (a
sale or a return, never both; totals that must add up; shipping per ``ecom_id``) are ``rules`` attached
to the nodes. A rule refuses (an error) only what the spec states or what cannot be true in any reading; a
relation the spec does not state is a *warning*: the checkout is stored as sent, with its warnings (the lists
are in docs/amounts.md). ``SALE_SUMMARY`` is the one validated node for the spec's ``sale.summary`` shape, used for
a checkout's sale parts and for the basket of orders a shop places.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from accounts.money import is_currency_code, minor_unit
from core.nodes import (
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
MAX_WARNINGS = 100
DEFAULT_MINOR_UNIT = 2  # when a report does not name its currency
MAX_SEQUENCE_NUMBER = 2**53 - 1  # the largest integer a JSON client holds exactly
# Unix seconds; the upper bound refuses milliseconds sent by mistake (and dates no clock should show).
MAX_TIMESTAMP = 4_102_444_800  # 2100-01-01T00:00:00Z

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


# --- Rules across the fields of a sale summary (decided; see the README's "Checkouts and sales") --------


@dataclass
class SaleReport(Report):
    """A ``Report`` that knows the currency the amounts are in, so totals compare at its minor unit.

    A plain ``Report`` works too: its amounts are then compared at two decimals, the minor unit of
    nearly every currency."""

    currency: str | None = None

    def warn(self, path: str, message: str, code: str = "unknown_field") -> None:
        # A checkout's warnings are stored with it and counted in /metrics: keep more than a plain report.
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append({"field": path, "message": message, "code": code})


def minor(report: Report) -> Decimal:
    """One minor unit of the report's currency (0.01 for DKK, 1 for JPY)."""
    currency = getattr(report, "currency", None)
    places = minor_unit(currency) if currency and is_currency_code(currency) else DEFAULT_MINOR_UNIT
    return Decimal(1).scaleb(-places)


def _q(amount: Decimal | int, unit: Decimal) -> Decimal:
    return Decimal(amount).quantize(unit, rounding=ROUND_HALF_UP)


def _mismatch(
    report: Report,
    path: str,
    field: str,
    stated: Decimal | int,
    expected: Decimal,
    unit: Decimal,
    *,
    slack: int = 0,
    what: str = "is",
    warning: str | None = None,
) -> None:
    """An error on ``path.field`` when ``stated`` and ``expected``, each rounded to the minor unit, differ
    by more than ``slack`` minor units; with ``warning`` (its code) a warning instead."""
    if abs(_q(stated, unit) - _q(expected, unit)) > unit * slack:
        if warning is None:
            report.error(join(path, field), f"{what} {stated}, but must be {_q(expected, unit)}", "total_mismatch")
        else:
            report.warn(join(path, field), f"{what} {stated}, expected {_q(expected, unit)}", warning)


LINE_AMOUNTS = ("base_price", "sub_total", "total", "total_tax_amount", "vat_amount", "sales_tax_amount")
SUMMED_AMOUNTS = LINE_AMOUNTS


def is_expense_line(line: dict[str, Any]) -> bool:
    return "expense" in (line.get("behavior") or {})


def _sale_or_return(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: "either a sale or a return, never both". A return has every quantity below zero and no
    positive amount; a sale (and an expense) has every quantity above zero."""
    is_return = summary["is_return"]
    for i, line in enumerate(summary["line_items"]):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        if is_return and line["quantity"] >= 0:
            report.error(join(at, "quantity"), "must be negative in a return", "return_quantity")
        elif not is_return and line["quantity"] <= 0:
            report.error(
                join(at, "quantity"), "must be positive in a sale (a return has is_return true)", "sale_quantity"
            )
        if is_return:
            for name in LINE_AMOUNTS:
                if line[name] > 0:
                    report.error(join(at, name), "must not be positive in a return", "return_amount")
    if is_return and summary["total"] > 0:
        report.error(join(path, "total"), "must not be positive in a return", "return_amount")


def _expense(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: Expense. Money paid out of the drawer: only expense lines, not a return, each line a
    positive quantity with amounts at or below zero."""
    lines = summary["line_items"]
    if not any(is_expense_line(line) for line in lines):
        return
    if summary["is_return"]:
        report.error(join(path, "is_return"), "must be false for an expense", "expense_return")
    for i, line in enumerate(lines):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        if not is_expense_line(line):
            report.error(
                join(at, "behavior"), "must be an expense: an expense sale has only expense lines", "mixed_expense"
            )
            continue
        for name in LINE_AMOUNTS:
            if line[name] > 0:
                report.error(join(at, name), "must not be positive for an expense", "expense_amount")


def _line_totals(summary: dict[str, Any], path: str, report: Report) -> None:
    """Refused: ``total_tax_amount`` is its parts, ``vat_amount + sales_tax_amount``. Warnings: relations the spec
    does not state (``total = sub_total + sales_tax_amount``; a ``retail_price`` that looks per unit; margins that
    disagree with the line's cost)."""
    unit = minor(report)
    for i, line in enumerate(summary["line_items"]):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        _mismatch(
            report,
            at,
            "total_tax_amount",
            line["total_tax_amount"],
            line["vat_amount"] + line["sales_tax_amount"],
            unit,
        )
        _mismatch(
            report,
            at,
            "total",
            line["total"],
            line["sub_total"] + line["sales_tax_amount"],
            unit,
            warning="line_total_mismatch",
        )
        _line_amounts(line, at, unit, report)


def _line_amounts(line: dict[str, Any], at: str, unit: Decimal, report: Report) -> None:
    quantity = Decimal(line["quantity"])
    retail_price = Decimal(line["retail_price"])
    base_price = Decimal(line["base_price"])
    if (
        abs(quantity) != 1
        and _q(retail_price, unit) != _q(base_price, unit)
        and _q(retail_price * quantity, unit) == _q(base_price, unit)
    ):
        report.warn(
            join(at, "retail_price"),
            f"is {line['retail_price']}, the price of one unit: a line's retail_price is the line's, "
            f"{_q(base_price, unit)} (quantity x unit price)",
            "retail_price_per_unit",
        )
    if "margin" in line and "margin_total" in line and "cost_price" in line:
        _mismatch(
            report,
            at,
            "margin",
            line["margin"],
            Decimal(line["margin_total"]) - Decimal(line["cost_price"]),
            unit,
            warning="margin_mismatch",
        )


def _summary_totals(summary: dict[str, Any], path: str, report: Report) -> None:
    """Refused: ``total_tax_amount`` differing from its parts (``vat_amount + sales_tax_amount``, and the
    ``taxes`` that break it down). Warnings: each amount the sum of its lines (within one minor unit per line:
    lines round apart) and ``total_discounts = base_price - sub_total``, relations the spec does not state."""
    unit = minor(report)
    lines = summary["line_items"]
    _mismatch(
        report,
        path,
        "total_tax_amount",
        summary["total_tax_amount"],
        Decimal(summary["vat_amount"]) + Decimal(summary["sales_tax_amount"]),
        unit,
    )
    for name in SUMMED_AMOUNTS:
        expected = sum((Decimal(line[name]) for line in lines), Decimal(0))
        _mismatch(report, path, name, summary[name], expected, unit, slack=len(lines), warning="line_sum_mismatch")
    _mismatch(
        report,
        path,
        "total_discounts",
        summary["total_discounts"],
        summary["base_price"] - summary["sub_total"],
        unit,
        warning="total_discounts_mismatch",
    )
    taxes = summary["taxes"]
    if taxes:
        expected = sum((Decimal(tax["amount"]) for tax in taxes), Decimal(0))
        # Reported on taxes: total_tax_amount is fixed by its parts above, so the tax summary is what is off.
        _mismatch(
            report,
            path,
            "taxes",
            expected,
            Decimal(summary["total_tax_amount"]),
            unit,
            slack=len(taxes),
            what="sum to",
        )


def _shipping_per_ecom_group(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: line item ``behavior.shipping``: group the items with an ``ecom_id``; each group has one
    shipping item."""
    for ecom_id, indexes in ecommerce_groups(summary["line_items"]).items():
        shipping = [i for i in indexes if "shipping" in (summary["line_items"][i].get("behavior") or {})]
        if not shipping:
            at = f"{path}.line_items[{indexes[0]}]" if path else f"line_items[{indexes[0]}]"
            report.error(
                join(at, "behavior.shipping"),
                f"the items with ecom_id '{ecom_id[:100]}' need one item with the shipping behavior",
                "shipping_required",
            )
        for i in shipping[1:]:
            at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
            report.error(
                join(at, "behavior.shipping"),
                f"the items with ecom_id '{ecom_id[:100]}' already have a shipping item",
                "one_shipping",
            )


def ecommerce_groups(line_items: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Indexes of the line items with an ``ecom_id``, by ``ecom_id``, in the order they appear."""
    groups: dict[str, list[int]] = {}
    for i, line in enumerate(line_items):
        if line.get("ecom_id") is not None:
            groups.setdefault(line["ecom_id"], []).append(i)
    return groups


SALE_SUMMARY = Obj(
    SALE_SUMMARY_FIELDS,
    required=SALE_SUMMARY_REQUIRED,
    rules=(_sale_or_return, _expense, _line_totals, _summary_totals, _shipping_per_ecom_group),
)

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
        "timestamp": Num(minimum=0, maximum=MAX_TIMESTAMP),
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


# --- Checkout (spec: Checkout) -------------------------------------------------------------------------


class AnyValue(Node):
    """Any JSON value (spec: ``fiscal_rules_data``, whose content is not shown)."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        return value


PAYMENTS = Arr(PAYMENT, max_items=MAX_PAYMENTS)

SALE_PART = Obj(
    {
        "identifier": ID,
        "sequence_number": Int(minimum=0, maximum=MAX_SEQUENCE_NUMBER),
        "basket": SALE_SUMMARY,
        "fiscal_rules_data": AnyValue(),
        # Extension (decided): in a checkout of several sales each part carries its own payments.
        "payments": PAYMENTS,
    },
    required=("identifier", "sequence_number", "basket"),
)


def paid(payments: list[dict[str, Any]]) -> Decimal:
    """The sum of the successful payment entries (cash rounding and cashback are signed entries)."""
    return sum((Decimal(p["amount"]) for p in payments if p["success"]), Decimal(0))


def _one_return_at_most(checkout: dict[str, Any], path: str, report: Report) -> None:
    returns = [i for i, part in enumerate(checkout["sales"]) if part["basket"]["is_return"]]
    for i in returns[1:]:
        report.error(join(path, f"sales[{i}].basket.is_return"), "a checkout has at most one return", "one_return")


def _unique_sale_identifiers(checkout: dict[str, Any], path: str, report: Report) -> None:
    seen: set[str] = set()
    for i, part in enumerate(checkout["sales"]):
        if part["identifier"] in seen:
            report.error(join(path, f"sales[{i}].identifier"), "is used by another sale of this checkout", "duplicate")
        seen.add(part["identifier"])


def _cover(
    report: Report, path: str, paid_amount: Decimal, total: Decimal, unit: Decimal, *, refuse: bool, warning: str
) -> None:
    """Payments that fall short of ``total`` (less than a sale's, or less refunded than a return's) are refused
    when ``refuse``; payments beyond it are a warning (change or a tip not booked as its own entry)."""
    paid_q, total_q = _q(paid_amount, unit), _q(total, unit)
    if paid_q == total_q:
        return
    short = abs(paid_q) < abs(total_q) or (paid_q * total_q < 0)
    message = f"sum to {paid_q}, but the total is {total_q}"
    if short and refuse:
        report.error(join(path, "payments"), message + ": the payments do not cover it", "payments_short")
    else:
        report.warn(join(path, "payments"), message, warning)


def _payments_cover_totals(checkout: dict[str, Any], path: str, report: Report) -> None:
    """Refused: successful payments that do not cover the checkout's total. Warnings: payments beyond it, and
    in a checkout of several sales (an exchange) a sale whose own payments are missing or differ from its
    total. A voided checkout was never paid."""
    if checkout.get("voided"):
        return
    unit = minor(SaleReport(currency=checkout["base_currency_code"]))
    sales = checkout["sales"]
    if len(sales) > 1:
        for i, part in enumerate(sales):
            at = join(path, f"sales[{i}]")
            if "payments" not in part:
                report.warn(
                    join(at, "payments"),
                    "is missing: the checkout's payments are booked with its first sale",
                    "payments_not_split",
                )
            else:
                _cover(
                    report,
                    at,
                    paid(part["payments"]),
                    Decimal(part["basket"]["total"]),
                    unit,
                    refuse=False,
                    warning="sale_payments_mismatch",
                )
    total = sum((Decimal(part["basket"]["total"]) for part in sales), Decimal(0))
    _cover(report, path, paid(checkout["payments"]), total, unit, refuse=True, warning="payments_exceed_total")


CHECKOUT = Obj(
    {
        "identifier": ID,
        "voided": Bool(),
        "timing": TIMING,
        "source": SOURCE,
        "base_currency_code": Currency(),
        "payments": PAYMENTS,
        "receipt_metadata": RECEIPT_METADATA,
        "sales": Arr(SALE_PART, min_items=1, max_items=MAX_SALES_PER_CHECKOUT),
    },
    required=("identifier", "timing", "source", "base_currency_code", "payments", "sales"),
    rules=(_one_return_at_most, _unique_sale_identifiers, _payments_cover_totals),
)


def check_checkout(body: Any) -> tuple[Any, SaleReport]:
    """The posted checkout, cleaned, or ``INVALID`` with the errors in the report. The amounts of its sales
    compare at the minor unit of its ``base_currency_code``."""
    currency = body.get("base_currency_code") if isinstance(body, dict) else None
    report = SaleReport(currency=currency if is_currency_code(currency) else None)
    return CHECKOUT.check(body, "", report), report
