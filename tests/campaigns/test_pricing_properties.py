"""Properties of the pricing engine, over random baskets and campaigns of every type."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from campaigns.pricing.engine import PricingLine, PricingResult
from campaigns.pricing.registry import CAMPAIGN_TYPES
from tests.support.campaigns import campaign, deposit_rule, price, sale_summary_errors, shipping

PRODUCTS = ("a", "b", "c", "d")
TAGS = ("t1", "t2", "bottle")
SETTINGS = settings(max_examples=150, deadline=None)

money = st.decimals(min_value=0, max_value=500, places=2)
fraction = st.decimals(min_value=0, max_value=1, places=2)
count = st.integers(min_value=1, max_value=5)
market_price = st.one_of(money, st.fixed_dictionaries({"dk": money}), st.fixed_dictionaries({"se": money}))
new_price_field = st.sampled_from(("new_price_per_item", "new_price_per_item_if_cheaper"))
product = st.sampled_from(PRODUCTS)
tag = st.sampled_from(TAGS)


@st.composite
def steps(draw: Any, value: Any) -> list[dict[str, Any]]:
    counts = draw(st.lists(count, min_size=1, max_size=3, unique=True))
    return [{"count": n, **draw(value)} for n in counts]


def new_price_values(draw: Any) -> dict[str, Any]:
    return {draw(new_price_field): draw(market_price)}


FIELDS_BY_TYPE: dict[str, Any] = {
    "percentage_discount-count_or_more-single_product": lambda d: {
        "product_id": d(product),
        "percentage": d(fraction),
        "count": d(count),
    },
    "percentage_discount-count_or_more-multiple_products": lambda d: {
        "product_ids": d(st.lists(product, min_size=1, max_size=3, unique=True)),
        "percentage": d(fraction),
        "count": d(count),
    },
    "percentage_discount-tag": lambda d: {"tag": d(tag), "percentage": d(fraction)},
    "percentage_discount-count_or_more-tag": lambda d: {"tag": d(tag), "percentage": d(fraction), "count": d(count)},
    "new_price_discount-single_product": lambda d: {"product_id": d(product), **new_price_values(d)},
    "new_price_discount-count_or_more-single_product": lambda d: {
        "product_id": d(product),
        "count": d(count),
        **new_price_values(d),
    },
    "new_price_discount-stair-single_product": lambda d: {
        "product_id": d(product),
        "steps": d(steps(st.builds(lambda k, v: {k: v}, new_price_field, market_price))),
    },
    "percentage_discount-stair-single_product": lambda d: {
        "product_id": d(product),
        "steps": d(steps(st.fixed_dictionaries({"percentage": fraction}))),
    },
    "percentage_discount-stair-tag": lambda d: {
        "tag": d(tag),
        "steps": d(steps(st.fixed_dictionaries({"percentage": fraction}))),
    },
    "amount_discount-stair-tag": lambda d: {
        "tag": d(tag),
        "steps": d(steps(st.fixed_dictionaries({"amount_per_item": market_price}))),
    },
    "free_shipping_by_amount": lambda d: {"amount_condition": d(market_price)},
}
assert set(FIELDS_BY_TYPE) == set(CAMPAIGN_TYPES)  # every registered type is exercised


@st.composite
def campaigns(draw: Any) -> list[dict[str, Any]]:
    types = draw(st.lists(st.sampled_from(sorted(FIELDS_BY_TYPE)), max_size=8))
    out = []
    for n, kind in enumerate(types):
        out.append(
            campaign(
                f"c{n}",
                kind,
                priority=draw(st.integers(min_value=0, max_value=3)),
                members_only=draw(st.booleans()),
                continue_evaluation=draw(st.booleans()),
                **FIELDS_BY_TYPE[kind](draw),
            )
        )
    return out


@st.composite
def lines(draw: Any) -> list[PricingLine]:
    n = draw(st.integers(min_value=1, max_value=6))
    out: list[PricingLine] = []
    for i in range(n):
        out.append(
            PricingLine(
                f"l{i}",
                draw(product),
                draw(st.integers(min_value=1, max_value=4)),
                draw(money),
                tags=tuple(draw(st.lists(tag, max_size=2, unique=True))),
            )
        )
    if draw(st.booleans()):
        out.append(shipping("ship", str(draw(money))))
    return out


RULES = [deposit_rule("pant", "bottle", {"dk": Decimal("1.50")})]
customers = st.one_of(st.none(), st.just({"identifier": "c-1"}))


def by_line(result: PricingResult) -> dict[str, dict[str, Any]]:
    return {item["line_item_id"]: item for item in result.summary["line_items"]}


def basket_totals(result: PricingResult) -> dict[str, Any]:
    return {k: v for k, v in result.summary.items() if k != "line_items"}


@SETTINGS
@given(campaigns(), lines(), customers)
def test_totals_are_never_negative(found: list[dict[str, Any]], basket: list[PricingLine], customer: Any) -> None:
    result = price(found, basket, rules=RULES, customer=customer)
    assert result.summary["total"] >= 0
    assert all(item["sub_total"] >= 0 and item["total"] >= 0 for item in result.summary["line_items"])


@SETTINGS
@given(campaigns(), lines(), customers)
def test_never_above_the_undiscounted_total(
    found: list[dict[str, Any]], basket: list[PricingLine], customer: Any
) -> None:
    result = price(found, basket, rules=RULES, customer=customer)
    assert result.summary["sub_total"] <= result.summary["base_price"]
    assert all(item["sub_total"] <= item["base_price"] for item in result.summary["line_items"])
    undiscounted = price([], basket, rules=RULES)
    assert result.summary["total"] <= undiscounted.summary["total"]


@SETTINGS
@given(campaigns(), lines(), customers, st.sampled_from(sorted(FIELDS_BY_TYPE)), st.data())
def test_a_campaign_matching_no_product_changes_nothing(
    found: list[dict[str, Any]], basket: list[PricingLine], customer: Any, kind: str, data: Any
) -> None:
    if kind == "free_shipping_by_amount":
        kind = "percentage_discount-tag"  # free shipping matches every basket by design
    fields = FIELDS_BY_TYPE[kind](data.draw)
    fields = {k: v for k, v in fields.items() if k not in ("product_id", "product_ids", "tag")}
    target = {"tag": "no-such-tag"} if "tag" in kind.split("-")[-1] else {"product_id": "no-such-product"}
    if kind.endswith("multiple_products"):
        target = {"product_ids": ["no-such-product"]}
    stranger = campaign("zz-stranger", kind, priority=99, **fields, **target)
    before = price(found, basket, rules=RULES, customer=customer)
    after = price([*found, stranger], basket, rules=RULES, customer=customer)
    assert after.summary == before.summary


@SETTINGS
@given(campaigns(), lines(), customers, st.randoms(use_true_random=False))
def test_the_order_of_campaigns_and_lines_does_not_matter(
    found: list[dict[str, Any]], basket: list[PricingLine], customer: Any, rng: Any
) -> None:
    before = price(found, basket, rules=RULES, customer=customer)
    shuffled_campaigns = list(found)
    rng.shuffle(shuffled_campaigns)
    shuffled_lines = list(basket)
    rng.shuffle(shuffled_lines)
    after = price(shuffled_campaigns, shuffled_lines, rules=RULES, customer=customer)
    assert by_line(after) == by_line(before)
    assert basket_totals(after) == basket_totals(before)


@SETTINGS
@given(campaigns(), lines(), customers)
def test_line_totals_sum_to_the_basket_total(
    found: list[dict[str, Any]], basket: list[PricingLine], customer: Any
) -> None:
    result = price(found, basket, rules=RULES, customer=customer)
    items = result.summary["line_items"]
    assert sum(item["total"] for item in items) == result.summary["total"]
    assert result.summary["total_discounts"] == result.summary["base_price"] - result.summary["sub_total"]
    assert sale_summary_errors(result) == []
