"""Percentage off when at least ``count`` eligible units are in the basket (spec: Discount campaign types
``percentage_discount-count_or_more-single_product``, ``-multiple_products`` and ``-tag``).

The count is over the units not locked by an earlier campaign, across every line of the product (of any of
the listed products, of any product with the tag); when it is reached, every one of those units is discounted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from campaigns.bodies import COUNT, PERCENTAGE, STR_ID, Campaign, OnProduct, OnTag
from campaigns.pricing.base import (
    Basket,
    CampaignResult,
    CompiledCampaign,
    LineState,
    count_trigger,
    not_applied,
    to_decimal,
)
from core.declare import Body, Field
from core.nodes import Arr

Units = list[tuple[LineState, int]]


def with_counted_units(
    campaign: CompiledCampaign, basket: Basket, *, count: int | None, apply: Callable[[Units], CampaignResult]
) -> CampaignResult:
    """The units the campaign matches, handed to ``apply`` when there are at least ``count`` of them (any number
    when None); the count-or-more and the new-price families both start so."""
    units, locked = basket.matching(campaign)
    if not units:
        return CampaignResult(False, not_applied(units, locked))
    if count is not None and len(units) < count:
        return CampaignResult(False, f"below count ({len(units)} of {count})")
    return apply(units)


def apply_percentage(campaign: CompiledCampaign, basket: Basket, *, count: int | None) -> CampaignResult:
    """Shared by the count-or-more and the unconditional tag campaigns (``count`` None)."""
    return with_counted_units(
        campaign, basket, count=count, apply=lambda units: percentage_off(campaign, basket, units)
    )


def percentage_off(campaign: CompiledCampaign, basket: Basket, units: Units) -> CampaignResult:
    percentage = to_decimal(campaign.definition["percentage"])
    changes = basket.discount(
        campaign,
        units,
        lambda price: price * percentage,
        type_value={"percentage": percentage},
        trigger=count_trigger(len(units)),
    )
    return CampaignResult(True, "applied", changes) if changes else CampaignResult(False, "not cheaper")


class SingleProduct:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset([definition["product_id"]]), frozenset()

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_percentage(campaign, basket, count=int(campaign.definition["count"]))


class MultipleProducts:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(definition["product_ids"]), frozenset()

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_percentage(campaign, basket, count=int(campaign.definition["count"]))


class Tag:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(), frozenset([definition["tag"]])

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_percentage(campaign, basket, count=int(campaign.definition["count"]))


# --- Import bodies of the family's type codes ---------------------------------------------------------


class PercentageFromCount(Body, schema_name="PercentageFromCount"):
    """`percentage` off every eligible unit once at least `count` of them are in the basket."""

    percentage = PERCENTAGE
    count = COUNT


class OnProducts(Body, schema_name="CampaignOnProducts"):
    """The products a campaign looks at."""

    product_ids = Field(
        Arr(STR_ID, min_items=1, max_items=10_000),
        description="The products the campaign looks at (1 to 10000 ids); `count` is the total across them.",
    )


class SingleProductBody(
    Campaign, OnProduct, PercentageFromCount, schema_name="PercentageCountOrMoreSingleProductCampaign"
):
    """`percentage` off every unit of the product once at least `count` of them are in the basket."""


class MultipleProductsBody(
    Campaign, OnProducts, PercentageFromCount, schema_name="PercentageCountOrMoreMultipleProductsCampaign"
):
    """`percentage` off every unit of the listed products once at least `count` of them are in the basket."""


class TagBody(Campaign, OnTag, PercentageFromCount, schema_name="PercentageCountOrMoreTagCampaign"):
    """`percentage` off every unit with the tag once at least `count` of them are in the basket."""
