"""The pricing engine: one table per campaign type and rule, totals worked out by hand.

Every case is priced with the engine's pure ``evaluate`` and checked against the ledger's sale summary rules; the
tests at the end go through ``price_basket`` and the database (stored campaigns, the per-process cache).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest

from accounts.models import Market
from campaigns import services
from campaigns.models import Campaign, PricingVersion
from campaigns.pricing.engine import PricingLine, PricingResult, clear_cache, compile_market, evaluate, price_basket
from core.errors import ServiceError
from tests.support.campaigns import (
    VAT_25,
    campaign,
    deposit_rule,
    line,
    market,
    price,
    reasons,
    sale_summary_errors,
    shipping,
    sub_totals,
)
from tests.support.tenants import Tenant

D = Decimal


# --- The tables -------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    campaigns: list[dict[str, Any]]
    lines: list[PricingLine]
    sub_totals: dict[str, str]  # line_item_id -> expected sub_total, worked out by hand in the comment
    total: str
    reasons: dict[str, str] = field(default_factory=dict)
    customer: dict[str, Any] | None = None
    rules: list[dict[str, Any]] = field(default_factory=list)
    at: Market | None = None


COUNT_SINGLE = "percentage_discount-count_or_more-single_product"
COUNT_MULTI = "percentage_discount-count_or_more-multiple_products"
TAG = "percentage_discount-tag"
COUNT_TAG = "percentage_discount-count_or_more-tag"
NEW_PRICE = "new_price_discount-single_product"
NEW_PRICE_COUNT = "new_price_discount-count_or_more-single_product"
NEW_PRICE_STAIR = "new_price_discount-stair-single_product"
PCT_STAIR = "percentage_discount-stair-single_product"
PCT_STAIR_TAG = "percentage_discount-stair-tag"
AMOUNT_STAIR_TAG = "amount_discount-stair-tag"
FREE_SHIPPING = "free_shipping_by_amount"

fifteen_off_3 = campaign("three", COUNT_SINGLE, product_id="p", percentage=D("0.15"), count=3)

COUNT_OR_MORE_CASES = [
    # 9.95 * 0.15 = 1.4925 -> 1.49 off each: 8.46 x 3 = 25.38 (docs/pricing.md's example)
    Case(
        "exactly count", [fifteen_off_3], [line("l1", "p", 3, "9.95")], {"l1": "25.38"}, "25.38", {"three": "applied"}
    ),
    Case(
        "one below count",
        [fifteen_off_3],
        [line("l1", "p", 2, "9.95")],
        {"l1": "19.90"},
        "19.90",
        {"three": "below count (2 of 3)"},
    ),
    # 2 + 1 units on two lines count together: 8.46 x 2 = 16.92 and 8.46
    Case(
        "lines of one product count together",
        [fifteen_off_3],
        [line("l1", "p", 2, "9.95"), line("l2", "p", 1, "9.95")],
        {"l1": "16.92", "l2": "8.46"},
        "25.38",
    ),
    Case("more than count", [fifteen_off_3], [line("l1", "p", 5, "9.95")], {"l1": "42.30"}, "42.30"),
    # a third off 10.00 is 3.333.. -> 3.33 per unit: 6.67 x 3 = 20.01, not 20.00
    Case(
        "rounding of thirds per unit",
        [campaign("third", COUNT_SINGLE, product_id="p", percentage=D("0.333333"), count=1)],
        [line("l1", "p", 3, "10.00")],
        {"l1": "20.01"},
        "20.01",
    ),
    # 0.25 * 0.5 = 0.125 off, half-up to 0.13: 0.12 left
    Case(
        "half-up rounding",
        [campaign("half", COUNT_SINGLE, product_id="p", percentage=D("0.5"), count=1)],
        [line("l1", "p", 1, "0.25")],
        {"l1": "0.12"},
        "0.12",
    ),
    Case(
        "another product does not count",
        [fifteen_off_3],
        [line("l1", "p", 2, "9.95"), line("l2", "q", 1, "9.95")],
        {"l1": "19.90", "l2": "9.95"},
        "29.85",
    ),
    # a x2 at 20.00 and b x1 at 10.00 make 3: 10% off each -> 36.00 and 9.00
    Case(
        "multiple products: count across the listed products",
        [campaign("ab", COUNT_MULTI, product_ids=["a", "b"], percentage=D("0.1"), count=3)],
        [line("l1", "a", 2, "20.00"), line("l2", "b", 1, "10.00"), line("l3", "c", 1, "5.00")],
        {"l1": "36.00", "l2": "9.00", "l3": "5.00"},
        "50.00",
    ),
    Case(
        "multiple products: an unlisted product does not count",
        [campaign("ab", COUNT_MULTI, product_ids=["a", "b"], percentage=D("0.1"), count=3)],
        [line("l1", "a", 2, "20.00"), line("l3", "c", 1, "5.00")],
        {"l1": "40.00", "l3": "5.00"},
        "45.00",
        {"ab": "below count (2 of 3)"},
    ),
    # two shirts with the tag: 50% off both -> 50.00 and 30.00
    Case(
        "tag count reached across products",
        [campaign("shirts", COUNT_TAG, tag="shirt", percentage=D("0.5"), count=2)],
        [line("l1", "s1", 1, "100.00", tags=("shirt",)), line("l2", "s2", 1, "60.00", tags=("shirt", "blue"))],
        {"l1": "50.00", "l2": "30.00"},
        "80.00",
    ),
    Case(
        "tag count one below",
        [campaign("shirts", COUNT_TAG, tag="shirt", percentage=D("0.5"), count=2)],
        [line("l1", "s1", 1, "100.00", tags=("shirt",)), line("l2", "x", 1, "60.00")],
        {"l1": "100.00", "l2": "60.00"},
        "160.00",
        {"shirts": "below count (1 of 2)"},
    ),
]

TAG_CASES = [
    # 12.50 * 0.2 = 2.50 off: 10.00 x 2
    Case(
        "tag: only tagged products",
        [campaign("sale", TAG, tag="sale", percentage=D("0.2"))],
        [line("l1", "a", 2, "12.50", tags=("sale",)), line("l2", "b", 1, "5.00", tags=("new",))],
        {"l1": "20.00", "l2": "5.00"},
        "25.00",
    ),
    Case(
        "tag: no product with the tag",
        [campaign("sale", TAG, tag="sale", percentage=D("0.2"))],
        [line("l1", "a", 1, "12.50", tags=("new",))],
        {"l1": "12.50"},
        "12.50",
        {},  # not even considered: the index finds no campaign for this basket
    ),
    Case(
        "tag: a full discount reaches zero, not below",
        [campaign("free", TAG, tag="sale", percentage=D("1"))],
        [line("l1", "a", 2, "3.99", tags=("sale",))],
        {"l1": "0.00"},
        "0.00",
    ),
]

seven_dk = {"dk": D("7.00"), "se": D("10.00")}
NEW_PRICE_CASES = [
    Case(
        "new price from the market's entry",
        [campaign("np", NEW_PRICE, product_id="p", new_price_per_item=seven_dk)],
        [line("l1", "p", 2, "9.95")],
        {"l1": "14.00"},
        "14.00",
    ),
    Case(
        "new price as one number for every market",
        [campaign("np", NEW_PRICE, product_id="p", new_price_per_item=D("7"))],
        [line("l1", "p", 2, "9.95")],
        {"l1": "14.00"},
        "14.00",
    ),
    Case(
        "new price: missing market key, the campaign does not apply",
        [campaign("np", NEW_PRICE, product_id="p", new_price_per_item={"se": D("7.00")})],
        [line("l1", "p", 2, "9.95")],
        {"l1": "19.90"},
        "19.90",
        {"np": "market price missing"},
    ),
    Case(
        "new price above the price never raises it",
        [campaign("np", NEW_PRICE, product_id="p", new_price_per_item=D("12.00"))],
        [line("l1", "p", 1, "9.95")],
        {"l1": "9.95"},
        "9.95",
        {"np": "not cheaper"},
    ),
    # 10.00 -10% (continued) = 9.00, then if-cheaper 8.50 < 9.00 wins
    Case(
        "if cheaper winning",
        [
            campaign("ten", TAG, priority=2, tag="t", percentage=D("0.1"), continue_evaluation=True),
            campaign("cheap", NEW_PRICE, priority=1, product_id="p", new_price_per_item_if_cheaper=D("8.50")),
        ],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "8.50"},
        "8.50",
        {"ten": "applied", "cheap": "applied"},
    ),
    # 10.00 -10% (continued) = 9.00, then if-cheaper 9.50 > 9.00 loses: 9.00 stays
    Case(
        "if cheaper losing",
        [
            campaign("ten", TAG, priority=2, tag="t", percentage=D("0.1"), continue_evaluation=True),
            campaign("cheap", NEW_PRICE, priority=1, product_id="p", new_price_per_item_if_cheaper=D("9.50")),
        ],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "9.00"},
        "9.00",
        {"ten": "applied", "cheap": "not cheaper"},
    ),
    Case(
        "new price count or more: exactly count",
        [campaign("two", NEW_PRICE_COUNT, product_id="p", count=2, new_price_per_item=D("5.00"))],
        [line("l1", "p", 2, "8.00")],
        {"l1": "10.00"},
        "10.00",
    ),
    Case(
        "new price count or more: one below",
        [campaign("two", NEW_PRICE_COUNT, product_id="p", count=2, new_price_per_item=D("5.00"))],
        [line("l1", "p", 1, "8.00")],
        {"l1": "8.00"},
        "8.00",
        {"two": "below count (1 of 2)"},
    ),
    Case(
        "new price zero is free, not negative",
        [campaign("gift", NEW_PRICE, product_id="p", new_price_per_item=D("0"))],
        [line("l1", "p", 3, "4.00")],
        {"l1": "0.00"},
        "0.00",
    ),
]

new_price_steps = [{"count": 2, "new_price_per_item": D("8.00")}, {"count": 4, "new_price_per_item": D("6.00")}]


def stair_case(units: int, expected: str, reason: str = "applied") -> Case:
    # 10.00 each; from 2 units 8.00 each, from 4 units 6.00 each
    return Case(
        f"new price stair with {units} units",
        [campaign("stair", NEW_PRICE_STAIR, product_id="p", steps=new_price_steps)],
        [line("l1", "p", units, "10.00")],
        {"l1": expected},
        expected,
        {"stair": reason},
    )


STAIR_CASES = [
    stair_case(1, "10.00", "below count (1 of 2)"),
    stair_case(2, "16.00"),  # the first step's count
    stair_case(3, "24.00"),  # between steps: the lower step
    stair_case(4, "24.00"),  # the next step's count: 6.00 x 4
    stair_case(7, "42.00"),  # above the last step: the last step
    Case(
        "new price stair: step price missing for the market",
        [
            campaign(
                "stair",
                NEW_PRICE_STAIR,
                product_id="p",
                steps=[{"count": 1, "new_price_per_item_if_cheaper": {"se": D("1")}}],
            )
        ],
        [line("l1", "p", 2, "10.00")],
        {"l1": "20.00"},
        "20.00",
        {"stair": "market price missing"},
    ),
    # 2 units: 10% -> 9.00 each; 3 units: 20% -> 8.00 each
    Case(
        "percentage stair: first step",
        [
            campaign(
                "ps",
                PCT_STAIR,
                product_id="p",
                steps=[{"count": 3, "percentage": D("0.2")}, {"count": 2, "percentage": D("0.1")}],
            )
        ],
        [line("l1", "p", 2, "10.00")],
        {"l1": "18.00"},
        "18.00",
    ),
    Case(
        "percentage stair: second step (steps in any order)",
        [
            campaign(
                "ps",
                PCT_STAIR,
                product_id="p",
                steps=[{"count": 3, "percentage": D("0.2")}, {"count": 2, "percentage": D("0.1")}],
            )
        ],
        [line("l1", "p", 1, "10.00"), line("l2", "p", 2, "10.00")],
        {"l1": "8.00", "l2": "16.00"},
        "24.00",
    ),
    # 2 + 2 tagged units = 4: 25% off 4.00 -> 3.00 each
    Case(
        "percentage stair by tag counts across products",
        [
            campaign(
                "pt",
                PCT_STAIR_TAG,
                tag="t",
                steps=[{"count": 2, "percentage": D("0.1")}, {"count": 4, "percentage": D("0.25")}],
            )
        ],
        [line("l1", "a", 2, "4.00", tags=("t",)), line("l2", "b", 2, "4.00", tags=("t",))],
        {"l1": "6.00", "l2": "6.00"},
        "12.00",
    ),
    # 2 units: 1.50 off 4.00 -> 2.50 each
    Case(
        "amount stair: 1.50 per item",
        [
            campaign(
                "as",
                AMOUNT_STAIR_TAG,
                tag="t",
                steps=[{"count": 2, "amount_per_item": D("1.50")}, {"count": 3, "amount_per_item": {"dk": D("5")}}],
            )
        ],
        [line("l1", "a", 2, "4.00", tags=("t",))],
        {"l1": "5.00"},
        "5.00",
    ),
    # 3 units: 5.00 off a 4.00 unit stops at 0, never below
    Case(
        "amount stair: never below zero",
        [
            campaign(
                "as",
                AMOUNT_STAIR_TAG,
                tag="t",
                steps=[{"count": 2, "amount_per_item": D("1.50")}, {"count": 3, "amount_per_item": {"dk": D("5")}}],
            )
        ],
        [line("l1", "a", 3, "4.00", tags=("t",))],
        {"l1": "0.00"},
        "0.00",
    ),
    Case(
        "amount stair: missing market key",
        [campaign("as", AMOUNT_STAIR_TAG, tag="t", steps=[{"count": 1, "amount_per_item": {"se": D("5")}}])],
        [line("l1", "a", 3, "4.00", tags=("t",))],
        {"l1": "12.00"},
        "12.00",
        {"as": "market price missing"},
    ),
]

ORDER_CASES = [
    # 1.00 -15% = 0.85 (continued), -10%: 0.085 -> 0.09 off = 0.76 (docs/pricing.md's example)
    Case(
        "continue evaluation on",
        [
            campaign("first", TAG, priority=2, tag="t", percentage=D("0.15"), continue_evaluation=True),
            campaign("second", TAG, priority=1, tag="t", percentage=D("0.10")),
        ],
        [line("l1", "p", 1, "1.00", tags=("t",))],
        {"l1": "0.76"},
        "0.76",
        {"first": "applied", "second": "applied"},
    ),
    Case(
        "continue evaluation off locks the unit",
        [
            campaign("first", TAG, priority=2, tag="t", percentage=D("0.15")),
            campaign("second", TAG, priority=1, tag="t", percentage=D("0.10")),
        ],
        [line("l1", "p", 1, "1.00", tags=("t",))],
        {"l1": "0.85"},
        "0.85",
        {"first": "applied", "second": "locked by a higher priority"},
    ),
    # the higher priority campaign runs first even with the later id
    Case(
        "priority decides, not the id",
        [
            campaign("a-low", TAG, priority=1, tag="t", percentage=D("0.10")),
            campaign("z-high", TAG, priority=5, tag="t", percentage=D("0.50")),
        ],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "5.00"},
        "5.00",
        {"z-high": "applied", "a-low": "locked by a higher priority"},
    ),
    # equal priorities: by campaign id, so "a-tenth" (10%) wins over "b-half"
    Case(
        "equal priorities go by campaign id",
        [
            campaign("b-half", TAG, priority=1, tag="t", percentage=D("0.5")),
            campaign("a-tenth", TAG, priority=1, tag="t", percentage=D("0.1")),
        ],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "9.00"},
        "9.00",
        {"a-tenth": "applied", "b-half": "locked by a higher priority"},
    ),
    # l1's 2 units are locked by the tag campaign: only l2's unit counts towards 3
    Case(
        "locked units no longer count",
        [
            campaign("tagged", TAG, priority=2, tag="t", percentage=D("0.10")),
            fifteen_off_3,
        ],
        [line("l1", "p", 2, "10.00", tags=("t",)), line("l2", "p", 1, "10.00")],
        {"l1": "18.00", "l2": "10.00"},
        "28.00",
        {"tagged": "applied", "three": "below count (1 of 3)"},
    ),
    # a campaign that lowers nothing does not lock: the later one still applies
    Case(
        "a campaign that does not lower the price does not lock",
        [
            campaign("dear", NEW_PRICE, priority=2, product_id="p", new_price_per_item=D("20.00")),
            campaign("half", TAG, priority=1, tag="t", percentage=D("0.5")),
        ],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "5.00"},
        "5.00",
        {"dear": "not cheaper", "half": "applied"},
    ),
    Case(
        "members only without a customer",
        [campaign("club", TAG, tag="t", percentage=D("0.2"), members_only=True)],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "10.00"},
        "10.00",
        {"club": "no customer"},
    ),
    Case(
        "members only with a customer",
        [campaign("club", TAG, tag="t", percentage=D("0.2"), members_only=True)],
        [line("l1", "p", 1, "10.00", tags=("t",))],
        {"l1": "8.00"},
        "8.00",
        {"club": "applied"},
        customer={"identifier": "c-1"},
    ),
    # JPY has no minor unit: 999 * 0.15 = 149.85 -> 150 off: 849 x 3
    Case(
        "rounding to the currency's minor unit (JPY 0)",
        [fifteen_off_3],
        [line("l1", "p", 3, "999")],
        {"l1": "2547"},
        "2547",
        at=market("jp", "JPY", [{"name": "JCT", "rate": 0.1, "type": "vat"}]),
    ),
]

free_shipping = campaign("ship", FREE_SHIPPING, priority=0, amount_condition={"dk": D("100")})
FREE_SHIPPING_CASES = [
    Case(
        "free shipping just below the condition",
        [free_shipping],
        [line("l1", "p", 1, "99.99"), shipping("s", "49.00")],
        {"l1": "99.99", "s": "49.00"},
        "148.99",
        {"ship": "below amount (99.99 of 100)"},
    ),
    Case(
        "free shipping at the condition",
        [free_shipping],
        [line("l1", "p", 1, "100.00"), shipping("s", "49.00")],
        {"l1": "100.00", "s": "0.00"},
        "100.00",
        {"ship": "applied"},
    ),
    # 110.00 -10% = 99.00 before free shipping is judged (lowest priority): not free
    Case(
        "free shipping judges the discounted total",
        [campaign("ten", TAG, priority=5, tag="t", percentage=D("0.1")), free_shipping],
        [line("l1", "p", 1, "110.00", tags=("t",)), shipping("s", "49.00")],
        {"l1": "99.00", "s": "49.00"},
        "148.00",
    ),
    # evaluated before the discount: judged on 110.00, free; then 99.00
    Case(
        "free shipping in its priority order",
        [campaign("ten", TAG, priority=5, tag="t", percentage=D("0.1")), dict(free_shipping, priority=D(9))],
        [line("l1", "p", 1, "110.00", tags=("t",)), shipping("s", "49.00")],
        {"l1": "99.00", "s": "0.00"},
        "99.00",
    ),
    # 99.00 of goods + 1.00 deposit: deposits are not part of the free-shipping total
    Case(
        "deposits do not count towards free shipping",
        [free_shipping],
        [line("l1", "p", 1, "99.00", tags=("bottle",)), shipping("s", "49.00")],
        {"l1": "99.00", "l1-deposit-pant": "1.00", "s": "49.00"},
        "149.00",
        rules=[deposit_rule("pant", "bottle", D("1.00"))],
    ),
    Case(
        "free shipping: missing market key",
        [campaign("ship", FREE_SHIPPING, priority=0, amount_condition={"se": D("1")})],
        [line("l1", "p", 1, "100.00"), shipping("s", "49.00")],
        {"l1": "100.00", "s": "49.00"},
        "149.00",
        {"ship": "market price missing"},
    ),
    Case(
        "product campaigns never discount a shipping line",
        [campaign("all", NEW_PRICE, product_id="shipping", new_price_per_item=D("0"))],
        [shipping("s", "49.00")],
        {"s": "49.00"},
        "49.00",
    ),
]

DEPOSIT_CASES = [
    # 6 x 12.00 = 72.00, deposit 6 x 1.50 = 9.00
    Case(
        "deposit on a multi-quantity line",
        [],
        [line("l1", "cola", 6, "12.00", tags=("bottle",))],
        {"l1": "72.00", "l1-deposit-pant": "9.00"},
        "81.00",
        rules=[deposit_rule("pant", "bottle", {"dk": D("1.50")})],
    ),
    # 50% off the cola (36.00); the deposit is never discounted (9.00)
    Case(
        "deposit lines are never discounted",
        [campaign("half", TAG, tag="bottle", percentage=D("0.5"))],
        [line("l1", "cola", 6, "12.00", tags=("bottle",))],
        {"l1": "36.00", "l1-deposit-pant": "9.00"},
        "45.00",
        rules=[deposit_rule("pant", "bottle", {"dk": D("1.50")})],
    ),
    Case(
        "deposit rule without the market's price adds nothing",
        [],
        [line("l1", "cola", 6, "12.00", tags=("bottle",))],
        {"l1": "72.00"},
        "72.00",
        rules=[deposit_rule("pant", "bottle", {"se": D("1.50")})],
    ),
    Case(
        "no deposit for a product without the tag",
        [],
        [line("l1", "bread", 2, "20.00", tags=("food",))],
        {"l1": "40.00"},
        "40.00",
        rules=[deposit_rule("pant", "bottle", D("1.50"))],
    ),
]

ALL_CASES = COUNT_OR_MORE_CASES + TAG_CASES + NEW_PRICE_CASES + STAIR_CASES + ORDER_CASES + FREE_SHIPPING_CASES
ALL_CASES += DEPOSIT_CASES


def run(case: Case) -> PricingResult:
    return price(case.campaigns, case.lines, rules=case.rules, at=case.at, customer=case.customer)


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.name for case in ALL_CASES])
def test_line_and_basket_totals(case: Case) -> None:
    result = run(case)
    assert sub_totals(result) == {k: D(v) for k, v in case.sub_totals.items()}
    assert result.summary["total"] == D(case.total)


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.name for case in ALL_CASES])
def test_explanation_reasons(case: Case) -> None:
    got = reasons(run(case))
    assert {k: got.get(k) for k in case.reasons} == case.reasons


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.name for case in ALL_CASES])
def test_answer_satisfies_the_ledger_sale_summary_rules(case: Case) -> None:
    currency = case.at.currency if case.at else "DKK"
    assert sale_summary_errors(run(case), currency) == []


# --- The answer's shape -----------------------------------------------------------------------------------


def test_discount_summary_names_the_campaign_its_type_and_trigger() -> None:
    result = price([fifteen_off_3], [line("l1", "p", 3, "9.95")])
    [summary] = result.summary["line_items"][0]["discounts"]
    assert summary == {
        "amount": D("4.47"),  # 1.49 x 3
        "discount": {
            "id": "three",
            "name": "three shown",
            "application": {"line_item": "l1"},
            "mode": {"automatic": {"domain": "KX_PROMOTION_DOMAIN", "identifier": "three"}},
            "type": {"percentage": D("0.15")},
            "trigger": {"items": "items", "count": 3},
        },
    }


def test_line_amounts_per_unit_and_per_line() -> None:
    item = price([fifteen_off_3], [line("l1", "p", 3, "9.95")]).summary["line_items"][0]
    # unit_price per unit; retail_price (as in a sale), base_price, sub_total, total and taxes for the whole line
    assert (item["unit_price"], item["retail_price"], item["base_price"], item["sub_total"], item["total"]) == (
        D("9.95"),
        D("29.85"),
        D("29.85"),
        D("25.38"),
        D("25.38"),
    )
    assert result_total_discounts(price([fifteen_off_3], [line("l1", "p", 3, "9.95")])) == D("4.47")


def result_total_discounts(result: PricingResult) -> Decimal:
    return result.summary["total_discounts"]


def test_discount_summaries_name_unit_ranges_when_part_of_a_line_is_discounted() -> None:
    from campaigns.pricing.base import Applied
    from campaigns.pricing.engine import _discount_summaries, compile_campaign

    compiled = compile_campaign(fifteen_off_3)
    assert compiled is not None
    applied = Applied(compiled, {"percentage": D("0.15")}, {"items": "items", "count": 3})
    applied.amounts = {0: D("1.49"), 1: D("1.49"), 3: D("1.49")}
    summaries = _discount_summaries(line("l1", "p", 4, "9.95"), applied)
    assert [(s["amount"], s["discount"]["application"]) for s in summaries] == [
        (D("2.98"), {"line_items": {"l1": {"start_index": 0, "end_index": 1}}}),
        (D("1.49"), {"line_items": {"l1": {"index": 3}}}),
    ]


def test_vat_is_included_in_the_price() -> None:
    # 100.00 incl. 25% VAT: 100 * 0.25 / 1.25 = 20.00; the total stays 100.00
    summary = price([], [line("l1", "p", 1, "100.00")]).summary
    assert (summary["total"], summary["vat_amount"], summary["sales_tax_amount"]) == (D("100.00"), D("20.00"), 0)
    assert summary["taxes"] == [{"amount": D("20.00"), "rate": D("0.25"), "tax_name": "VAT", "type": "vat"}]


def test_sales_tax_is_added_on_top_of_the_discounted_price() -> None:
    us = market("us", "USD", [{"name": "State", "rate": 0.08, "type": "sales_tax"}])
    # 3 x 10.00 -10% = 27.00; sales tax 27.00 * 0.08 = 2.16; total 29.16
    result = price(
        [campaign("ten", TAG, tag="t", percentage=D("0.1"))], [line("l1", "p", 3, "10.00", tags=("t",))], at=us
    )
    item = result.summary["line_items"][0]
    assert (item["sub_total"], item["sales_tax_amount"], item["total"]) == (D("27.00"), D("2.16"), D("29.16"))
    assert result.summary["total"] == D("29.16")
    assert sale_summary_errors(result, "USD") == []


def test_tax_summaries_per_rate_sum_the_lines() -> None:
    food = [{"name": "VAT", "rate": D("0.12"), "type": "vat"}]
    # 25%: 50.00 -> 10.00 and 12.50 -> 2.50; 12%: 11.20 -> 11.20 * 0.12 / 1.12 = 1.20
    result = price(
        [],
        [line("a", "p", 1, "50.00"), line("b", "q", 1, "11.20", taxes=food), line("c", "r", 1, "12.50")],
    )
    assert result.summary["taxes"] == [
        {"amount": D("1.20"), "rate": D("0.12"), "tax_name": "VAT", "type": "vat"},
        {"amount": D("12.50"), "rate": D("0.25"), "tax_name": "VAT", "type": "vat"},
    ]
    assert result.summary["vat_amount"] == D("13.70")


def test_deposit_line_shape() -> None:
    result = price(
        [],
        [line("l1", "cola", 6, "12.00", tags=("bottle",), taxes=[{"name": "VAT", "rate": D("0.25"), "type": "vat"}])],
        rules=[deposit_rule("pant", "bottle", {"dk": D("1.50")}, product_group="deposits")],
    )
    _parent, deposit = result.summary["line_items"]
    assert deposit["line_item_id"] == "l1-deposit-pant"
    assert (deposit["quantity"], deposit["unit_price"], deposit["retail_price"]) == (6, D("1.50"), D("9.00"))
    assert deposit["name"] == {"da": "Pant", "en": "Deposit"}
    assert deposit["product_group"] == "deposits"
    assert deposit["behavior"] == {
        "container_deposit": {"product_id": "cola", "tag": "bottle", "rule_id": "pant", "parent_line_item_id": "l1"}
    }
    assert deposit["discounts"] == []
    assert deposit["vat_amount"] == D("1.80")  # taxed like its parent: 9.00 * 0.25 / 1.25


def test_deposit_rule_without_the_market_warns() -> None:
    result = price(
        [], [line("l1", "cola", 1, "12.00", tags=("bottle",))], rules=[deposit_rule("pant", "bottle", {"se": 1})]
    )
    assert [w["code"] for w in result.warnings] == ["market_price_missing"]


def test_explanation_lists_each_unit_before_and_after() -> None:
    result = price([fifteen_off_3], [line("l1", "p", 3, "9.95")])
    assert result.explanation is not None
    [entry] = result.explanation
    assert entry["fired"] is True
    assert entry["units"] == [
        {"line_item_id": "l1", "index": i, "before": D("9.95"), "after": D("8.46")} for i in range(3)
    ]


def test_explanation_is_none_unless_asked() -> None:

    result = evaluate(compiled=compile_market([fifteen_off_3], []), market=market(), lines=[line("l", "p", 1, "1")])
    assert result.explanation is None


def test_customer_specific_discounts_are_evaluated_beside_stored_campaigns() -> None:
    # a runtime integration's answer: plain numbers, possibly floats; 9.95 -> 6.50 beats nothing stored
    extra = [
        {
            "id": "vip-p",
            "type": NEW_PRICE,
            "product_id": "p",
            "new_price_per_item": 6.5,
            "name": "VIP",
            "display_name": "VIP price",
            "priority": 10,
        }
    ]
    result = price([fifteen_off_3], [line("l1", "p", 3, "9.95")], extra=extra)
    assert sub_totals(result) == {"l1": D("19.50")}
    assert reasons(result) == {"vip-p": "applied", "three": "locked by a higher priority"}
    assert result.explanation is not None
    assert result.explanation[0]["source"] == "customer"


@pytest.mark.parametrize(
    "extra",
    [
        {"id": "odd", "type": "buy_one_get_one", "product_id": "p", "priority": 1, "name": "x", "display_name": "x"},
        {"id": "no-price", "type": NEW_PRICE, "product_id": "p", "priority": 1, "name": "x", "display_name": "x"},
        {"id": "text", "type": TAG, "tag": "t", "percentage": "half", "priority": 1, "name": "x", "display_name": "x"},
        {"id": "no-id", "type": TAG, "tag": "t", "percentage": 0.5},
        "not an object",
    ],
)
def test_an_invalid_customer_specific_discount_is_left_out_with_a_warning(extra: Any) -> None:
    result = price([], [line("l1", "p", 1, "9.95", tags=("t",))], extra=[extra])
    assert sub_totals(result) == {"l1": D("9.95")}
    assert result.warnings
    assert {w["code"] for w in result.warnings} == {"invalid_customer_discount"}


@pytest.mark.parametrize(
    ("lines", "field_name"),
    [
        ([line("l1", "p", 1, "1"), line("l1", "q", 1, "1")], "line_items[1].line_item_id"),
        ([line("l1", "p", 0, "1")], "line_items[0].quantity"),
        ([line("l1", "p", 1, "-1")], "line_items[0].unit_price"),
        ([PricingLine("l1", "p", 1, D("NaN"))], "line_items[0].unit_price"),
        ([line("l1", "p", 10_001, "1")], "line_items[0].quantity"),
        ([line("l1", "p", 1, "1", tags=("b",)), line("l1-deposit-pant", "q", 1, "1")], "line_items[0].line_item_id"),
    ],
)
def test_bad_lines_are_refused_with_the_field(lines: list[PricingLine], field_name: str) -> None:
    with pytest.raises(ServiceError) as caught:
        price([], lines, rules=[deposit_rule("pant", "b", D(1))])
    assert caught.value.field == field_name


# --- Through the database: stored campaigns, the cache and its version ----------------------------------


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def store(tenant: Tenant, campaigns: list[dict[str, Any]], rules: list[dict[str, Any]] | None = None) -> None:
    services.upsert_campaigns(account=tenant.account, markets=[tenant.market], items=campaigns)
    if rules:
        services.upsert_product_rules(account=tenant.account, markets=[tenant.market], items=rules)


def price_stored(tenant: Tenant, lines: list[PricingLine], **options: Any) -> PricingResult:
    return price_basket(account=tenant.account, market=tenant.market, lines=lines, explain=True, **options)


@pytest.mark.usefixtures("fresh_cache")
def test_stored_campaigns_and_rules_price_the_basket(tenant: Tenant) -> None:
    store(tenant, [fifteen_off_3], [deposit_rule("pant", "bottle", {"dk": D("1.00")})])
    result = price_stored(tenant, [line("l1", "p", 3, "9.95", tags=("bottle",))])
    assert sub_totals(result) == {"l1": D("25.38"), "l1-deposit-pant": D("3.00")}
    assert sale_summary_errors(result) == []


@pytest.mark.usefixtures("fresh_cache")
def test_an_upsert_is_seen_by_the_next_call(tenant: Tenant) -> None:
    store(tenant, [fifteen_off_3])
    basket = [line("l1", "p", 3, "10.00")]
    assert price_stored(tenant, basket).summary["total"] == D("25.50")
    store(tenant, [dict(fifteen_off_3, percentage=D("0.5"))])
    assert price_stored(tenant, basket).summary["total"] == D("15.00")


@pytest.mark.usefixtures("fresh_cache")
def test_a_deletion_is_seen_by_the_next_call(tenant: Tenant) -> None:
    store(tenant, [fifteen_off_3], [deposit_rule("pant", "bottle", D("1"))])
    basket = [line("l1", "p", 3, "10.00", tags=("bottle",))]
    assert price_stored(tenant, basket).summary["total"] == D("28.50")
    services.delete_campaigns(account=tenant.account, markets=[tenant.market], ids=["three"])
    assert price_stored(tenant, basket).summary["total"] == D("33.00")
    services.delete_product_rules(account=tenant.account, markets=[tenant.market], ids=["pant"])
    assert price_stored(tenant, basket).summary["total"] == D("30.00")


@pytest.mark.usefixtures("fresh_cache")
def test_a_cached_market_costs_one_query(tenant: Tenant, django_assert_num_queries: Any) -> None:
    store(tenant, [fifteen_off_3])
    price_stored(tenant, [line("l1", "p", 3, "10.00")])
    with django_assert_num_queries(1):
        price_stored(tenant, [line("l1", "p", 3, "10.00")])


@pytest.mark.usefixtures("fresh_cache")
def test_a_write_by_another_process_is_seen_through_the_version_row(tenant: Tenant) -> None:
    store(tenant, [fifteen_off_3])
    basket = [line("l1", "p", 3, "10.00")]
    price_stored(tenant, basket)  # cached
    # Another process: the rows and the version change in the database, not through this process's memory.
    Campaign.objects.filter(market=tenant.market).update(definition=dict(fifteen_off_3, percentage=D("0.5")))
    PricingVersion.objects.filter(market=tenant.market).update(version=uuid.uuid4())
    assert price_stored(tenant, basket).summary["total"] == D("15.00")


@pytest.mark.usefixtures("fresh_cache")
def test_campaigns_of_another_market_or_account_do_not_apply(tenant: Tenant, other_tenant: Tenant) -> None:
    store(other_tenant, [fifteen_off_3])
    se = Market.objects.create(account=tenant.account, identifier="se", currency="SEK", default_taxes=VAT_25)
    services.upsert_campaigns(account=tenant.account, markets=[se], items=[fifteen_off_3])
    assert price_stored(tenant, [line("l1", "p", 3, "10.00")]).summary["total"] == D("30.00")


@pytest.mark.usefixtures("fresh_cache")
def test_another_accounts_market_is_refused(tenant: Tenant, other_tenant: Tenant) -> None:
    with pytest.raises(ServiceError):
        price_basket(account=tenant.account, market=other_tenant.market, lines=[line("l1", "p", 1, "1")])


@pytest.mark.usefixtures("fresh_cache")
def test_the_market_without_any_import_prices_at_retail(tenant: Tenant) -> None:
    result = price_stored(tenant, [line("l1", "p", 2, "10.00")])
    assert result.summary["total"] == D("20.00")
    assert result.explanation == []
