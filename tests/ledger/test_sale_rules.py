"""The rules of a sale summary and a checkout (ledger.bodies.checkouts): sale or return, totals that add up,
expenses, shipping per e-commerce group, payments; and the derived timing strings."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from core.nodes import INVALID, Report
from ledger.bodies.checkouts import SALE_SUMMARY, SaleReport, check_checkout
from ledger.services.checkouts import body_hash, derive_timing, strip_customer
from tests.support.checkouts import checkout_body


def as_posted(body: Any) -> Any:
    """The body as the server parses it (fractions as Decimal)."""
    return json.loads(json.dumps(body), parse_float=Decimal)


def basket(**options: Any) -> dict[str, Any]:
    return as_posted(checkout_body(**options))["sales"][0]["basket"]


def summary_errors(summary: dict[str, Any], report: Report | None = None) -> dict[str, str]:
    report = report or SaleReport(currency="DKK")
    SALE_SUMMARY.check(summary, "", report)
    return {e["field"]: e["code"] for e in report.errors}


def summary_warnings(summary: dict[str, Any]) -> dict[str, str]:
    report = SaleReport(currency="DKK")
    SALE_SUMMARY.check(summary, "", report)
    return {w["field"]: w["code"] for w in report.warnings}


def checkout_errors(body: dict[str, Any]) -> dict[str, str]:
    cleaned, report = check_checkout(as_posted(body))
    assert (cleaned is INVALID) == bool(report.errors)
    return {e["field"]: e["code"] for e in report.errors}


def test_a_valid_sale_summary_passes() -> None:
    assert summary_errors(basket(lines=[("p-1", "a", 3, "33.33"), ("p-2", None, 1, "0.05")])) == {}


def test_a_valid_return_summary_passes() -> None:
    assert summary_errors(basket(is_return=True)) == {}


def test_a_summary_without_line_items_passes() -> None:
    assert summary_errors(basket(lines=[])) == {}


# --- A sale or a return, never both -------------------------------------------------------------------


def test_a_sale_with_a_negative_quantity_is_refused() -> None:
    summary = basket(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 10)])
    summary["line_items"][1]["quantity"] = -1

    assert summary_errors(summary)["line_items[1].quantity"] == "sale_quantity"


def test_a_sale_with_a_zero_quantity_is_refused() -> None:
    summary = basket()
    summary["line_items"][0]["quantity"] = 0

    assert summary_errors(summary)["line_items[0].quantity"] == "sale_quantity"


def test_a_return_with_a_positive_quantity_is_refused() -> None:
    summary = basket(is_return=True)
    summary["line_items"][0]["quantity"] = 2

    assert summary_errors(summary) == {"line_items[0].quantity": "return_quantity"}


def test_a_return_with_a_positive_amount_is_refused() -> None:
    summary = basket(is_return=True, lines=[("p-1", None, 1, 100), ("p-2", None, 1, 100)])
    line = summary["line_items"][1]
    line["base_price"] = line["sub_total"] = line["total"] = Decimal(100)
    line["vat_amount"] = line["total_tax_amount"] = Decimal(20)

    errors = summary_errors(summary)

    assert errors["line_items[1].total"] == "return_amount"
    assert errors["line_items[1].vat_amount"] == "return_amount"


# --- Totals that add up ------------------------------------------------------------------------------------


def test_a_line_whose_total_tax_amount_is_not_its_parts_is_refused() -> None:
    summary = basket()
    summary["line_items"][0]["total_tax_amount"] += Decimal("0.01")

    assert summary_errors(summary)["line_items[0].total_tax_amount"] == "total_mismatch"


def test_a_line_whose_total_is_not_sub_total_plus_sales_tax_is_a_warning() -> None:
    # The spec does not state total = sub_total + sales_tax_amount.
    summary = basket()
    summary["line_items"][0]["total"] += Decimal("0.01")

    assert summary_errors(summary) == {}
    assert summary_warnings(summary)["line_items[0].total"] == "line_total_mismatch"


def test_a_line_with_sales_tax_adds_it_to_the_total() -> None:
    summary = basket(vat_rate=0)
    for target in (summary, summary["line_items"][0]):
        target["sales_tax_amount"] = target["total_tax_amount"] = Decimal(16)
        target["total"] = target["sub_total"] + 16
    summary["taxes"] = [{"amount": Decimal(16), "rate": Decimal("0.08"), "name": "State", "type": "sales_tax"}]

    assert summary_errors(summary) == {}


@pytest.mark.parametrize("field", ["base_price", "sub_total", "total"])
def test_a_summary_amount_that_is_not_the_sum_of_its_lines_is_a_warning(field: str) -> None:
    # The spec does not state that a summary amount is the sum of its lines.
    summary = basket(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 50)])
    summary[field] += Decimal("0.03")  # beyond one minor unit per line

    assert summary_errors(summary) == {}
    assert summary_warnings(summary)[field] == "line_sum_mismatch"


@pytest.mark.parametrize("field", ["total_tax_amount", "vat_amount", "sales_tax_amount"])
def test_a_summary_total_tax_amount_that_is_not_its_parts_is_refused(field: str) -> None:
    summary = basket(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 50)])
    summary[field] += Decimal("0.03")

    assert summary_errors(summary)["total_tax_amount"] == "total_mismatch"


def test_a_summary_amount_may_differ_from_its_lines_by_one_minor_unit_per_line() -> None:
    summary = basket(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 50)])
    summary["vat_amount"] += Decimal("0.02")
    summary["total_tax_amount"] += Decimal("0.02")
    summary["taxes"][0]["amount"] += Decimal("0.02")

    assert summary_errors(summary) == {}


def test_amounts_are_compared_after_rounding_to_the_minor_unit() -> None:
    summary = basket()
    summary["line_items"][0]["total"] += Decimal("0.004")
    summary["total"] += Decimal("0.004")

    assert summary_errors(summary) == {}


def test_total_discounts_other_than_base_price_minus_sub_total_is_a_warning() -> None:
    summary = basket()
    summary["line_items"][0]["base_price"] += 50
    summary["base_price"] += 50

    assert summary_errors(summary) == {}
    assert summary_warnings(summary) == {"total_discounts": "total_discounts_mismatch"}

    summary["total_discounts"] = Decimal(50)
    assert summary_warnings(summary) == {}


def test_taxes_that_do_not_sum_to_the_total_tax_amount_are_refused() -> None:
    summary = basket()
    summary["taxes"][0]["amount"] += 1

    assert summary_errors(summary) == {"taxes": "total_mismatch"}


def test_a_plain_report_compares_at_two_decimals() -> None:
    summary = basket()
    summary["line_items"][0]["total_tax_amount"] += Decimal("0.01")

    assert summary_errors(summary, Report()) == {"line_items[0].total_tax_amount": "total_mismatch"}


def test_a_currency_without_decimals_compares_whole_units() -> None:
    summary = basket(currency="JPY", lines=[("p-1", None, 1, 1100)], vat_rate="0.10")
    summary["line_items"][0]["total"] += Decimal("0.4")
    summary["total"] += Decimal("0.4")

    assert summary_errors(summary, SaleReport(currency="JPY")) == {}


# --- Expenses and shipping ------------------------------------------------------------------------------


def expense_line(line: dict[str, Any]) -> dict[str, Any]:
    line["behavior"] = {"expense": {"identifier": "coffee", "image_urls": []}}
    return line


def test_an_expense_summary_passes() -> None:
    summary = basket(lines=[("x", None, 1, -40)])
    expense_line(summary["line_items"][0])

    assert summary_errors(summary) == {}


def test_an_expense_mixed_with_a_sale_line_is_refused() -> None:
    summary = basket(lines=[("x", None, 1, -40), ("p-1", None, 1, 100)])
    expense_line(summary["line_items"][0])

    assert summary_errors(summary) == {"line_items[1].behavior": "mixed_expense"}


def test_an_expense_that_pays_into_the_drawer_is_refused() -> None:
    summary = basket(lines=[("x", None, 1, 40)])
    expense_line(summary["line_items"][0])

    assert summary_errors(summary)["line_items[0].total"] == "expense_amount"


def test_an_expense_cannot_be_a_return() -> None:
    summary = basket(lines=[("x", None, 1, -40)], is_return=True)
    expense_line(summary["line_items"][0])

    assert summary_errors(summary)["is_return"] == "expense_return"


def test_two_behaviors_on_one_line_are_refused() -> None:
    summary = basket()
    summary["line_items"][0]["behavior"] = {
        "shipping": {},
        "giftcard": {"code": "G-1", "integration_id": "gc"},
    }

    assert summary_errors(summary) == {"line_items[0].behavior": "one_behavior"}


def shipped(summary: dict[str, Any], *assignments: tuple[int, str, bool]) -> dict[str, Any]:
    for index, ecom_id, shipping in assignments:
        summary["line_items"][index]["ecom_id"] = ecom_id
        if shipping:
            summary["line_items"][index]["behavior"] = {"shipping": {"method_id": "gls"}}
    return summary


THREE = [("p-1", None, 1, 100), ("p-2", None, 1, 50), ("p-3", None, 1, 20)]


def test_each_ecommerce_group_with_its_shipping_item_passes() -> None:
    summary = shipped(basket(lines=THREE), (0, "web-1", False), (1, "web-1", True), (2, "web-2", True))

    assert summary_errors(summary) == {}


def test_an_ecommerce_group_with_two_shipping_items_is_refused() -> None:
    summary = shipped(basket(lines=THREE), (0, "web-1", True), (1, "web-1", True))

    assert summary_errors(summary) == {"line_items[1].behavior.shipping": "one_shipping"}


def test_an_ecommerce_group_without_a_shipping_item_is_named_at_its_first_item() -> None:
    summary = shipped(basket(lines=THREE), (0, "web-1", True), (1, "web-2", False), (2, "web-2", False))

    assert summary_errors(summary) == {"line_items[1].behavior.shipping": "shipping_required"}


# --- Discount summaries (schema) -----------------------------------------------------------------------


def discount(**overrides: Any) -> dict[str, Any]:
    return {
        "amount": Decimal(20),
        "discount": {
            "id": "d-1",
            "application": {"line_item": "li-1"},
            "mode": {"automatic": {"domain": "KX_PROMOTION_DOMAIN", "identifier": "c-1"}},
            "type": {"percentage": Decimal("0.1")},
            "trigger": {"items": "line_item", "count": 1},
            **overrides,
        },
    }


def test_a_line_discount_summary_passes() -> None:
    summary = basket()
    summary["line_items"][0]["discounts"] = [discount()]

    assert summary_errors(summary) == {}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"application": {"basket": True, "line_item": "li-1"}}, "discount.application"),
        ({"mode": {"manual": False}}, "discount.mode.manual"),
        ({"type": {"bogus": 1}}, "discount.type.bogus"),
        ({"trigger": {"items": "everything"}}, "discount.trigger.items"),
    ],
)
def test_a_malformed_discount_summary_is_named(overrides: dict[str, Any], field: str) -> None:
    summary = basket()
    summary["line_items"][0]["discounts"] = [discount(**overrides)]

    assert f"line_items[0].discounts[0].{field}" in summary_errors(summary)


# --- Checkout rules ------------------------------------------------------------------------------------------


def test_a_valid_checkout_passes() -> None:
    assert checkout_errors(checkout_body()) == {}


def test_payments_that_do_not_cover_the_total_are_refused() -> None:
    assert checkout_errors(checkout_body(payments=[("cash", 150)])) == {"payments": "payments_short"}


def test_cash_rounding_and_cashback_are_signed_payment_entries() -> None:
    body = checkout_body(
        lines=[("p-1", None, 1, "99.75")], payments=[("cash", 200), ("cash.rounding", "0.25"), ("cash", -100.5)]
    )
    body["payments"][1]["amount"] = -0.25  # 99.75 paid as 100 in cash

    assert checkout_errors(body) == {"payments": "payments_short"}  # 99.25 paid for 99.75
    body["payments"][2]["amount"] = -100
    assert checkout_errors(body) == {}


def test_failed_payments_do_not_count() -> None:
    body = checkout_body(payments=[("card.external", 200), ("card.external", 200)])
    body["payments"][0]["success"] = False

    assert checkout_errors(body) == {}


def test_a_voided_checkout_needs_no_payments() -> None:
    assert checkout_errors(checkout_body(voided=True, payments=[])) == {}


def test_sale_errors_are_named_with_their_place_in_the_checkout() -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["line_items"][0]["total_tax_amount"] = 1

    assert checkout_errors(body)["sales[0].basket.line_items[0].total_tax_amount"] == "total_mismatch"


def test_an_unknown_currency_is_named() -> None:
    assert checkout_errors(checkout_body(currency="XXY")) == {"base_currency_code": "invalid_currency"}


# --- Timing, customers, hashing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timestamp", "zone", "date_string", "week_string"),
    [
        (1735552800, "Europe/Copenhagen", "2024-12-30-11-00", "2025-01"),  # Monday of ISO week 1 of 2025
        (1609459200, "UTC", "2021-01-01-00-00", "2020-53"),  # Friday of ISO week 53 of 2020
        (1609455600, "America/New_York", "2020-12-31-18-00", "2020-53"),
        (1704067199, "UTC", "2023-12-31-23-59", "2023-52"),
        (1711846800, "Europe/Copenhagen", "2024-03-31-03-00", "2024-13"),  # just after the DST change
    ],
)
def test_timing_strings(timestamp: int, zone: str, date_string: str, week_string: str) -> None:
    timing = derive_timing({"timestamp": timestamp, "timezone": zone}, default_timezone="UTC")

    assert timing is not None
    assert timing["timestamp_date_string"] == date_string
    assert timing["timestamp_week_string"] == week_string


def test_the_timestamp_string_carries_the_local_offset() -> None:
    timing = derive_timing({"timestamp": Decimal("1720000000.5")}, default_timezone="Europe/Copenhagen")

    assert timing is not None
    assert timing["timestamp_string"] == "2024-07-03T11:46:40.500+02:00"


def test_an_unknown_time_zone_derives_nothing() -> None:
    assert derive_timing({"timestamp": 0, "timezone": "../../etc/passwd"}, default_timezone="UTC") is None


def test_a_private_customer_keeps_only_the_identifier() -> None:
    assert strip_customer({"identifier": "C-1", "name": "Jane", "email": "j@example.com"}) == {"identifier": "C-1"}


def test_the_body_hash_ignores_key_order_and_number_formatting() -> None:
    assert body_hash({"a": Decimal("1.50"), "b": [1, 2]}) == body_hash({"b": [Decimal("1.0"), 2], "a": Decimal("1.5")})
    assert body_hash({"a": 1}) != body_hash({"a": "1"})
