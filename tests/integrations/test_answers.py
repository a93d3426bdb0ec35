"""Unit tests of ``integrations.bodies.answers``: each kind's answer checked against its spec model."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from integrations.bodies.answers import describe, require_valid, validate
from integrations.errors import BadAnswer
from integrations.kinds import KINDS
from tests.support.reference_server import customer_discount

GIFTCARD: dict[str, Any] = {
    "amount": Decimal("100"),
    "code": "GC1",
    "create_date": Decimal("1736933400.5"),
    "currency_code": "DKK",
    "expiry_date": Decimal("1768469400.5"),
    "id": "card-1",
    "status": 1,
}
DISCOUNT = customer_discount("1")


def fields(problems: list[dict[str, str]]) -> list[str]:
    return [p["field"] for p in problems]


def test_every_kind_has_a_validator() -> None:
    for kind in KINDS:
        validate(kind, None)  # no KeyError: every kind is known


# --- product_search -------------------------------------------------------------------------------------


def test_a_product_search_answer_keeps_valid_products_with_decimal_prices() -> None:
    cleaned, problems = validate("product_search", [{"id": "p", "name": {"da": "Trøje"}, "retail_price": 499.95}])

    assert problems == []
    assert cleaned == [{"id": "p", "name": {"da": "Trøje"}, "retail_price": Decimal("499.95")}]


def test_a_product_without_retail_price_is_named_by_its_index() -> None:
    cleaned, problems = validate("product_search", [{"retail_price": 1}, {"name": "Socks"}])

    assert fields(problems) == ["[1].retail_price"]
    assert problems[0]["code"] == "required"
    assert cleaned == [{"retail_price": 1}]  # the valid elements only


def test_a_product_price_of_the_wrong_type_is_refused() -> None:
    _, problems = validate("product_search", [{"retail_price": "12.50"}])

    assert problems == [
        {"field": "[0].retail_price", "message": "must be a number, not string", "code": "invalid_type"}
    ]


def test_a_negative_sale_price_is_refused() -> None:
    _, problems = validate("product_search", [{"retail_price": 10, "sale_price": -1}])

    assert fields(problems) == ["[0].sale_price"]


def test_a_bad_tax_is_named_with_its_path() -> None:
    _, problems = validate(
        "product_search", [{"retail_price": 10, "taxes": [{"name": "VAT", "rate": 25, "type": "vat"}]}]
    )

    assert fields(problems) == ["[0].taxes[0].rate"]


def test_an_empty_optional_text_of_a_product_is_accepted() -> None:
    cleaned, problems = validate("product_search", [{"retail_price": 10, "barcode": "", "variant_name": ""}])

    assert problems == []
    assert cleaned[0]["barcode"] == ""


def test_unknown_fields_of_a_product_are_dropped() -> None:
    cleaned, problems = validate("product_search", [{"retail_price": 10, "stock": 4}])

    assert problems == []
    assert cleaned == [{"retail_price": 10}]


def test_a_product_search_answer_that_is_not_an_array_is_unusable() -> None:
    cleaned, problems = validate("product_search", {"products": []})

    assert cleaned is None
    assert problems[0]["code"] == "invalid_type"


def test_a_too_long_answer_is_refused() -> None:
    cleaned, problems = validate("shipping_options", [{}] * 1001)

    assert cleaned is None
    assert problems[0]["code"] == "too_long"


# --- product_lookup ----------------------------------------------------------------------------------------


def test_a_product_lookup_answer_is_a_spec_product() -> None:
    cleaned, problems = validate(
        "product_lookup", {"id": "ext-1", "name": "Hammer", "retail_price": {"dk": 149.95}, "cost_price": 60}
    )

    assert problems == []
    assert cleaned == {"id": "ext-1", "name": "Hammer", "retail_price": {"dk": Decimal("149.95")}, "cost_price": 60}


def test_a_product_without_id_or_name_is_refused() -> None:
    cleaned, problems = validate("product_lookup", {"barcode": "123"})

    assert cleaned is None
    assert sorted(fields(problems)) == ["id", "name"]


def test_a_product_lookup_answer_that_is_an_array_is_refused() -> None:
    cleaned, problems = validate("product_lookup", [{"id": "x", "name": "y"}])

    assert cleaned is None
    assert problems[0]["message"] == "must be an object, not array"


# --- customer_lookup --------------------------------------------------------------------------------------


def test_a_customer_needs_an_identifier() -> None:
    _, problems = validate("customer_lookup", [{"name": "Jens"}])

    assert fields(problems) == ["[0].identifier"]


def test_the_deprecated_balance_object_is_accepted() -> None:
    answer = [{"identifier": "c-2", "balance": {"identifier": "acct", "balance": -250.5}}]

    cleaned, problems = validate("customer_lookup", answer)

    assert problems == []
    assert cleaned[0]["balance"] == {"identifier": "acct", "balance": Decimal("-250.5")}


def test_a_deprecated_balance_object_needs_both_fields() -> None:
    _, problems = validate("customer_lookup", [{"identifier": "c", "balance": {"balance": 3}}])

    assert fields(problems) == ["[0].balance.identifier"]


def test_a_balance_that_is_text_is_refused() -> None:
    _, problems = validate("customer_lookup", [{"identifier": "c", "balance": "100"}])

    assert problems[0]["field"] == "[0].balance"
    assert problems[0]["code"] == "invalid_type"


def test_block_sales_must_be_a_boolean() -> None:
    _, problems = validate("customer_lookup", [{"identifier": "c", "block_sales": "yes"}])

    assert fields(problems) == ["[0].block_sales"]


def test_a_negative_credit_limit_is_refused() -> None:
    _, problems = validate("customer_lookup", [{"identifier": "c", "credit_limit": -1}])

    assert fields(problems) == ["[0].credit_limit"]


def test_a_unicode_customer_is_kept_as_it_is() -> None:
    cleaned, problems = validate("customer_lookup", [{"identifier": "ø-1", "name": "Ærø Æblemost 🍎", "city": ""}])

    assert problems == []
    assert cleaned[0]["name"] == "Ærø Æblemost 🍎"


# --- customer_discounts -------------------------------------------------------------------------------------


def test_a_customer_discount_is_checked_like_a_campaign_of_its_type() -> None:
    cleaned, problems = validate("customer_discounts", [DISCOUNT])

    assert problems == []
    assert cleaned == [DISCOUNT]


def test_a_customer_discount_without_its_type_fields_is_refused() -> None:
    discount = {k: v for k, v in DISCOUNT.items() if k != "product_id"}

    _, problems = validate("customer_discounts", [discount])

    assert fields(problems) == ["[0].product_id"]


def test_a_customer_discount_of_an_unknown_type_is_refused() -> None:
    _, problems = validate("customer_discounts", [{**DISCOUNT, "type": "bogus"}])

    assert fields(problems) == ["[0].type"]


def test_a_customer_discount_with_a_market_price_object_is_refused() -> None:
    _, problems = validate("customer_discounts", [{**DISCOUNT, "new_price_per_item": {"dk": 79}}])

    assert fields(problems) == ["[0].new_price_per_item"]
    assert "plain number" in problems[0]["message"]


def test_a_stair_step_price_must_be_a_plain_number_too() -> None:
    stair = {
        **DISCOUNT,
        "type": "new_price_discount-stair-single_product",
        "steps": [{"count": 2, "new_price_per_item": 70}, {"count": 5, "new_price_per_item": {"dk": 60}}],
    }
    del stair["new_price_per_item"]

    _, problems = validate("customer_discounts", [stair])

    assert fields(problems) == ["[0].steps[1].new_price_per_item"]


# --- shipping_options -----------------------------------------------------------------------------------------


def test_a_shipping_option_needs_all_four_fields() -> None:
    _, problems = validate("shipping_options", [{"id": "gls"}])

    assert sorted(fields(problems)) == ["[0].price", "[0].subtitle", "[0].title"]


def test_a_shipping_option_may_have_an_empty_subtitle() -> None:
    cleaned, problems = validate("shipping_options", [{"id": "gls", "price": 39, "title": "GLS", "subtitle": ""}])

    assert problems == []
    assert cleaned == [{"id": "gls", "price": 39, "title": "GLS", "subtitle": ""}]


def test_a_negative_shipping_price_is_refused() -> None:
    _, problems = validate("shipping_options", [{"id": "g", "price": -39, "title": "G", "subtitle": "s"}])

    assert fields(problems) == ["[0].price"]


# --- gift cards and customer accounts ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["giftcard_create", "giftcard_activate", "giftcard_read", "giftcard_pay"])
def test_a_gift_card_entity_is_accepted_for_every_gift_card_kind(kind: str) -> None:
    cleaned, problems = validate(kind, {**GIFTCARD, "external_giftcard": {"issuer": "x"}})

    assert problems == []
    assert cleaned["external_giftcard"] == {"issuer": "x"}


def test_a_gift_card_needs_every_required_field() -> None:
    cleaned, problems = validate("giftcard_read", {"code": "GC1"})

    assert cleaned is None
    assert sorted(fields(problems)) == ["amount", "create_date", "currency_code", "expiry_date", "id", "status"]


@pytest.mark.parametrize("status", [0, 4, "2", True])
def test_a_gift_card_status_outside_1_2_3_is_refused(status: Any) -> None:
    _, problems = validate("giftcard_read", {**GIFTCARD, "status": status})

    assert fields(problems) == ["status"]


def test_a_gift_card_status_written_as_2_0_is_read_as_2() -> None:
    cleaned, _ = validate("giftcard_read", {**GIFTCARD, "status": 2.0})

    assert cleaned["status"] == 2


def test_a_gift_card_in_an_unknown_currency_is_refused() -> None:
    _, problems = validate("giftcard_read", {**GIFTCARD, "currency_code": "XXY"})

    assert fields(problems) == ["currency_code"]


def test_external_giftcard_must_be_an_object() -> None:
    _, problems = validate("giftcard_read", {**GIFTCARD, "external_giftcard": "abc"})

    assert fields(problems) == ["external_giftcard"]


@pytest.mark.parametrize("kind", ["customer_account_read", "customer_account_pay"])
def test_a_customer_account_answer_needs_an_amount(kind: str) -> None:
    assert validate(kind, {"amount": 12.5}) == ({"amount": Decimal("12.5")}, [])
    assert fields(validate(kind, {})[1]) == ["amount"]
    assert fields(validate(kind, {"amount": "12"})[1]) == ["amount"]


def test_a_non_finite_amount_is_refused() -> None:
    _, problems = validate("customer_account_read", {"amount": Decimal("NaN")})

    assert problems[0]["code"] == "invalid_number"


# --- require_valid and describe --------------------------------------------------------------------------------


def test_require_valid_raises_bad_answer_naming_the_first_field() -> None:
    with pytest.raises(BadAnswer) as caught:
        require_valid("product_search", [{"retail_price": 1}, {}])

    assert caught.value.status_code == 502
    assert caught.value.field == "[1].retail_price"
    assert "[1].retail_price is required" in caught.value.message


def test_require_valid_names_the_answer_when_its_root_is_wrong() -> None:
    with pytest.raises(BadAnswer) as caught:
        require_valid("customer_account_read", "<html>")

    assert caught.value.field == "answer"


def test_describe_says_how_many_problems_it_left_out() -> None:
    problems = [{"field": f"[{i}].id", "message": "is required", "code": "required"} for i in range(5)]

    assert describe(problems) == "[0].id is required; [1].id is required; [2].id is required (and 2 more)"
