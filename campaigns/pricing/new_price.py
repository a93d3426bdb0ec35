"""A new price per unit (spec: ``new_price_discount-single_product`` and
``new_price_discount-count_or_more-single_product``; rules 2 and 3).

``new_price_per_item`` and ``new_price_per_item_if_cheaper`` are MarketPrices: without an entry for the
basket's market the campaign does not apply there. A discount never raises a price, so a new price at or
above a unit's current price leaves that unit as it is (and unlocked) with either field; the explanation says
"not cheaper".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from campaigns.bodies import COUNT, Campaign, NewPrices, OnProduct
from campaigns.pricing.base import (
    Basket,
    CampaignResult,
    CompiledCampaign,
    LineState,
    count_trigger,
    market_price,
)
from campaigns.pricing.count_or_more import with_counted_units

NEW_PRICE_FIELDS = ("new_price_per_item", "new_price_per_item_if_cheaper")


def new_price_value(values: Mapping[str, Any]) -> Any:
    """The MarketPrice of whichever of the two new-price fields is given (the import checked exactly one)."""
    for name in NEW_PRICE_FIELDS:
        if values.get(name) is not None:
            return values[name]
    return None


def apply_new_price(
    campaign: CompiledCampaign, basket: Basket, units: Sequence[tuple[LineState, int]], value: Any
) -> CampaignResult:
    price = market_price(value, basket.market)
    if price is None:
        return CampaignResult(False, "market price missing")
    changes = basket.discount(
        campaign,
        units,
        lambda current: current - price,
        type_value={"new_price_per_item": price},
        trigger=count_trigger(len(units)),
    )
    return CampaignResult(True, "applied", changes) if changes else CampaignResult(False, "not cheaper")


def apply_counted(campaign: CompiledCampaign, basket: Basket, *, count: int | None) -> CampaignResult:
    return with_counted_units(
        campaign,
        basket,
        count=count,
        apply=lambda units: apply_new_price(campaign, basket, units, new_price_value(campaign.definition)),
    )


class SingleProduct:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset([definition["product_id"]]), frozenset()

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_counted(campaign, basket, count=None)


class CountOrMoreSingleProduct(SingleProduct):
    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_counted(campaign, basket, count=int(campaign.definition["count"]))


# --- Import bodies of the family's type codes ---------------------------------------------------------


class SingleProductBody(Campaign, OnProduct, NewPrices, schema_name="NewPriceSingleProductCampaign"):
    """A new price for every unit of the product."""


class CountOrMoreSingleProductBody(SingleProductBody, schema_name="NewPriceCountOrMoreSingleProductCampaign"):
    """A new price for every unit of the product once at least `count` of them are in the basket."""

    count = COUNT
