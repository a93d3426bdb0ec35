"""Stairs: the step is chosen by the number of eligible units (spec: Discount campaign rule 1; types
``new_price_discount-stair-single_product``, ``percentage_discount-stair-single_product``,
``percentage_discount-stair-tag``, ``amount_discount-stair-tag``).

Below the lowest step's count nothing applies; from a step's count up to the next step's count that step
applies; from the highest step's count upward the last step. The chosen step's value applies to every
eligible unit (units not locked by an earlier campaign, of every line of the product or with the tag).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from campaigns.pricing.base import (
    Basket,
    CompiledCampaign,
    Outcome,
    count_trigger,
    market_price,
    not_applied,
    to_decimal,
)
from campaigns.pricing.count_or_more import matcher
from campaigns.pricing.new_price import apply_new_price, new_price_value
from campaigns.schema import (
    NEW_PRICE_FIELDS,
    ONE_NEW_PRICE,
    PERCENTAGE,
    STR_ID,
    campaign,
    distinct_step_counts,
    stairs,
)
from core.nodes import MarketPrice


def choose_step(steps: list[Mapping[str, Any]], count: int) -> Mapping[str, Any] | None:
    chosen = None
    for step in sorted(steps, key=lambda s: int(s["count"])):
        if int(step["count"]) <= count:
            chosen = step
    return chosen


class Stair:
    value = "percentage"  # what a step holds: percentage, amount_per_item or a new price

    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        if "tag" in definition:
            return frozenset(), frozenset([definition["tag"]])
        return frozenset([definition["product_id"]]), frozenset()

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> Outcome:
        units, locked = basket.matching(matcher(campaign))
        if not units:
            return Outcome(False, not_applied(units, locked))
        steps = list(campaign.definition["steps"])
        step = choose_step(steps, len(units))
        if step is None:
            lowest = min(int(s["count"]) for s in steps)
            return Outcome(False, f"below count ({len(units)} of {lowest})")
        if self.value == "new_price":
            return apply_new_price(campaign, basket, units, new_price_value(step))
        trigger = count_trigger(len(units))
        if self.value == "amount_per_item":
            amount = market_price(step["amount_per_item"], basket.market)
            if amount is None:
                return Outcome(False, "market price missing")
            changes = basket.discount(
                campaign, units, lambda _price: amount, type_value={"amount_per_item": amount}, trigger=trigger
            )
        else:
            percentage = to_decimal(step["percentage"])
            changes = basket.discount(
                campaign,
                units,
                lambda price: price * percentage,
                type_value={"percentage": percentage},
                trigger=trigger,
            )
        return Outcome(True, "applied", changes) if changes else Outcome(False, "not cheaper")


class PercentageStair(Stair):
    value = "percentage"


class AmountStair(Stair):
    value = "amount_per_item"


class NewPriceStair(Stair):
    value = "new_price"


# --- Import schemas of the family's type codes --------------------------------------------------------

_PERCENTAGE_STEPS = stairs({"percentage": PERCENTAGE}, required=("count", "percentage"))
NEW_PRICE_SINGLE_PRODUCT_SCHEMA = campaign(
    {"product_id": STR_ID, "steps": stairs(NEW_PRICE_FIELDS, required=("count",), rules=(ONE_NEW_PRICE,))},
    required=("product_id", "steps"),
    rules=(distinct_step_counts,),
)
PERCENTAGE_SINGLE_PRODUCT_SCHEMA = campaign(
    {"product_id": STR_ID, "steps": _PERCENTAGE_STEPS}, required=("product_id", "steps"), rules=(distinct_step_counts,)
)
PERCENTAGE_TAG_SCHEMA = campaign(
    {"tag": STR_ID, "steps": _PERCENTAGE_STEPS}, required=("tag", "steps"), rules=(distinct_step_counts,)
)
AMOUNT_TAG_SCHEMA = campaign(
    # Money, so a MarketPrice like new prices (spec rule 3) as well as a plain number.
    {
        "tag": STR_ID,
        "steps": stairs({"amount_per_item": MarketPrice(positive=True)}, required=("count", "amount_per_item")),
    },
    required=("tag", "steps"),
    rules=(distinct_step_counts,),
)
