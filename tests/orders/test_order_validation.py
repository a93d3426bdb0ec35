"""Every field rule of the order import models (spec: Incoming order, Basket, LineItem, Discount, ...)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.nodes import INVALID, Report
from orders.bodies import ExternalOrder, IncomingOrder, OutgoingOrderStateChange
from tests.support.documents import DELETE, change_at
from tests.support.imports import as_posted, order


def order_errors(item: Any, schema: Any = IncomingOrder) -> list[tuple[str, str]]:
    report = Report()
    schema.check(as_posted(item), "", report)
    return [(e["field"], e["code"]) for e in report.errors]


def with_change(path: list[Any], value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    return change_at(copy.deepcopy(base or order()), path, value)


LINE = ["basket", "line_items", 0]


def test_the_minimum_order_is_valid():
    assert order_errors(order()) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (["order_identifier"], DELETE, ("order_identifier", "required")),
        (["order_identifier"], "", ("order_identifier", "blank")),
        (["order_identifier"], 42, ("order_identifier", "invalid_type")),
        (["order_identifier"], "x" * 256, ("order_identifier", "too_long")),
        (["basket"], DELETE, ("basket", "required")),
        (["basket"], [], ("basket", "invalid_type")),
        (["basket", "currency"], DELETE, ("basket.currency", "required")),
        (["basket", "currency"], "XYZ", ("basket.currency", "invalid_currency")),
        (["basket", "currency"], "dkk", ("basket.currency", "invalid_currency")),
        (["basket", "line_items"], [], ("basket.line_items", "empty")),
        (["basket", "line_items"], {}, ("basket.line_items", "invalid_type")),
        ([*LINE, "product_identifier"], DELETE, ("basket.line_items[0].product_identifier", "required")),
        ([*LINE, "name"], DELETE, ("basket.line_items[0].name", "required")),
        ([*LINE, "name"], " ", ("basket.line_items[0].name", "blank")),
        ([*LINE, "product_identifier"], "", ("basket.line_items[0].product_identifier", "blank")),
        (["customer"], {"customer_identifier": ""}, ("customer.customer_identifier", "blank")),
        ([*LINE, "quantity"], 0, ("basket.line_items[0].quantity", "out_of_range")),
        ([*LINE, "quantity"], -1, ("basket.line_items[0].quantity", "out_of_range")),
        ([*LINE, "quantity"], 1.5, ("basket.line_items[0].quantity", "invalid_type")),
        ([*LINE, "quantity"], "2", ("basket.line_items[0].quantity", "invalid_type")),
        ([*LINE, "quantity"], True, ("basket.line_items[0].quantity", "invalid_type")),
        ([*LINE, "price"], 0, ("basket.line_items[0].price", "out_of_range")),
        ([*LINE, "price"], -0.01, ("basket.line_items[0].price", "out_of_range")),
        ([*LINE, "price"], "9.95", ("basket.line_items[0].price", "invalid_type")),
        ([*LINE, "price"], 10**13, ("basket.line_items[0].price", "out_of_range")),
        ([*LINE, "image_url"], "ftp://x/y.png", ("basket.line_items[0].image_url", "invalid_url")),
        ([*LINE, "image_url"], "img.png", ("basket.line_items[0].image_url", "invalid_url")),
        (
            [*LINE, "discounts"],
            [{"name": "d", "type": "percentage", "amount": 1.5}],
            ("basket.line_items[0].discounts[0].amount", "out_of_range"),
        ),
        (
            [*LINE, "discounts"],
            [{"name": "d", "type": "percentage", "amount": -0.1}],
            ("basket.line_items[0].discounts[0].amount", "out_of_range"),
        ),
        (
            [*LINE, "discounts"],
            [{"name": "d", "type": "bogus", "amount": 1}],
            ("basket.line_items[0].discounts[0].type", "invalid_choice"),
        ),
        (
            [*LINE, "discounts"],
            [{"type": "amount", "amount": 1}],
            ("basket.line_items[0].discounts[0].name", "required"),
        ),
        (
            ["basket", "discounts"],
            [{"name": "d", "type": "amount_per_item", "amount": 1}],
            ("basket.discounts[0].type", "not_allowed"),
        ),
        (
            ["basket", "discounts"],
            [{"name": "d", "type": "new_price_per_item", "amount": 1}],
            ("basket.discounts[0].type", "not_allowed"),
        ),
        (["customer"], "jane", ("customer", "invalid_type")),
        (["payment"], {}, ("payment.reference", "required")),
        (["shipping"], {"method_id": "gls"}, ("shipping", "shipping_without_payment")),
    ],
)
def test_each_field_rule_names_the_field(path, value, expected):
    assert expected in order_errors(with_change(path, value))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["customer"], {"name": "", "phone_number": " ", "email": ""}),
        ([*LINE, "variant_identifier"], ""),
        ([*LINE, "barcode"], " "),
    ],
)
def test_the_optional_customer_and_line_texts_take_a_blank(path, value):
    item = with_change(path, value)
    assert order_errors(item) == []
    assert order_errors({**item, "customer": {"customer_identifier": "c", "name": ""}}, ExternalOrder) == []


@pytest.mark.parametrize("kind", ["amount", "amount_per_item", "percentage", "new_price", "new_price_per_item"])
def test_every_discount_type_is_allowed_on_a_line_item(kind):
    item = with_change([*LINE, "discounts"], [{"name": "d", "type": kind, "amount": 0.5}])
    assert order_errors(item) == []


@pytest.mark.parametrize("kind", ["amount", "percentage", "new_price"])
def test_basket_level_discount_types_are_allowed_on_the_basket(kind):
    assert order_errors(with_change(["basket", "discounts"], [{"name": "d", "type": kind, "amount": 0.5}])) == []


def test_percentage_bounds_are_inclusive():
    for amount in (0, 1):
        assert (
            order_errors(with_change([*LINE, "discounts"], [{"name": "d", "type": "percentage", "amount": amount}]))
            == []
        )


def test_l10n_strings_accept_a_string_or_a_language_map():
    full = order(
        payment={"reference": "r"},
        shipping={"method_title": {"da": "Levering", "en": "Delivery"}, "method_subtitle": "1-2 dage"},
    )
    assert order_errors(full) == []
    assert ("shipping.method_title", "blank") in order_errors(
        order(payment={"reference": "r"}, shipping={"method_title": {}})
    )
    assert ("shipping.method_title", "invalid_type") in order_errors(
        order(payment={"reference": "r"}, shipping={"method_title": 5})
    )


def test_unicode_text_is_kept():
    item = with_change([*LINE, "name"], "Smørrebrød 🥪 مرحبا 日本")
    report = Report()
    cleaned = IncomingOrder.check(as_posted(item), "", report)
    assert report.errors == []
    assert cleaned["basket"]["line_items"][0]["name"] == "Smørrebrød 🥪 مرحبا 日本"


def test_nul_characters_are_refused():
    assert ("basket.line_items[0].name", "invalid") in order_errors(with_change([*LINE, "name"], "a\x00b"))


def test_external_orders_take_no_payment_or_shipping():
    report = Report()
    cleaned = ExternalOrder.check(as_posted(order(payment={"reference": "r"})), "", report)
    assert "payment" not in cleaned
    assert report.warnings[0]["field"] == "payment"


def test_state_change_requires_stock_location_identifier_and_state():
    assert set(order_errors({}, OutgoingOrderStateChange)) == {
        ("stock_location", "required"),
        ("order_identifier", "required"),
        ("state", "required"),
    }
    bad_state = {"stock_location": "s", "order_identifier": "o", "state": "shipped"}
    assert ("state", "invalid_choice") in order_errors(bad_state, OutgoingOrderStateChange)


def test_state_change_cashier_needs_display_name_and_identifier_and_an_https_image():
    change = {
        "stock_location": "s",
        "order_identifier": "o",
        "state": "ready",
        "cashier": {"full_name": "A B", "image_url": "http://x/y.png"},
    }
    assert set(order_errors(change, OutgoingOrderStateChange)) == {
        ("cashier.display_name", "required"),
        ("cashier.identifier", "required"),
        ("cashier.image_url", "invalid_url"),
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.decimals(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["order_identifier", "basket", "customer", "payment", "shipping", "x"]), json_values, max_size=6
    )
)
def test_any_json_yields_a_clean_order_or_named_errors_never_an_exception(item):
    report = Report()
    cleaned = IncomingOrder.check(item, "", report)
    assert (cleaned is INVALID) == bool(report.errors)
    for error in report.errors:
        assert set(error) == {"field", "message", "code"}


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_any_basket_value_is_checked_without_an_exception(basket):
    report = Report()
    cleaned = IncomingOrder.check({"order_identifier": "o", "basket": basket}, "", report)
    assert (cleaned is INVALID) == bool(report.errors)
