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

from campaigns.bodies import PERCENTAGE, NewPrices, OnProduct, OnTag, StairCampaign, Step
from campaigns.pricing.base import (
    Basket,
    CampaignResult,
    CompiledCampaign,
    count_trigger,
    market_price,
    not_applied,
    to_decimal,
)
from campaigns.pricing.new_price import apply_new_price, new_price_value
from core.declare import Field
from core.nodes import Arr, MarketPrice


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

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        units, locked = basket.matching(campaign)
        if not units:
            return CampaignResult(False, not_applied(units, locked))
        steps = list(campaign.definition["steps"])
        step = choose_step(steps, len(units))
        if step is None:
            lowest = min(int(s["count"]) for s in steps)
            return CampaignResult(False, f"below count ({len(units)} of {lowest})")
        if self.value == "new_price":
            return apply_new_price(campaign, basket, units, new_price_value(step))
        trigger = count_trigger(len(units))
        if self.value == "amount_per_item":
            amount = market_price(step["amount_per_item"], basket.market)
            if amount is None:
                return CampaignResult(False, "market price missing")
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
        return CampaignResult(True, "applied", changes) if changes else CampaignResult(False, "not cheaper")


class PercentageStair(Stair):
    value = "percentage"


class AmountStair(Stair):
    value = "amount_per_item"


class NewPriceStair(Stair):
    value = "new_price"


# --- Import bodies of the family's type codes ---------------------------------------------------------


class PercentageStep(Step, schema_name="PercentageCampaignStep"):
    """A step of a percentage stair."""

    percentage = PERCENTAGE


class NewPriceStep(Step, NewPrices, schema_name="NewPriceCampaignStep"):
    """A step of a new-price stair."""


class AmountStep(Step, schema_name="AmountCampaignStep"):
    """A step of an amount stair: money, so a MarketPrice like new prices (spec rule 3) as well as a number."""

    amount_per_item = Field(
        MarketPrice(positive=True),
        description=(
            "Taken off each unit, VAT included, in the currency's major unit, above 0: a number, or a market "
            "identifier to a number."
        ),
    )


def steps_of(step: type[Step]) -> Field:
    return Field(
        Arr(step, min_items=1, max_items=100),
        description="The steps (1 to 100), each from its `count` on; below the lowest, the default price applies.",
    )


class NewPriceSingleProductBody(StairCampaign, OnProduct, schema_name="NewPriceStairSingleProductCampaign"):
    """The step's new price for every unit of the product."""

    steps = steps_of(NewPriceStep)


class PercentageSingleProductBody(StairCampaign, OnProduct, schema_name="PercentageStairSingleProductCampaign"):
    """The step's `percentage` off every unit of the product."""

    steps = steps_of(PercentageStep)


class PercentageTagBody(StairCampaign, OnTag, schema_name="PercentageStairTagCampaign"):
    """The step's `percentage` off every unit with the tag."""

    steps = steps_of(PercentageStep)


class AmountTagBody(StairCampaign, OnTag, schema_name="AmountStairTagCampaign"):
    """The step's `amount_per_item` off every unit with the tag."""

    steps = steps_of(AmountStep)
