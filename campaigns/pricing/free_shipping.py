"""Free shipping from an amount (spec: ``free_shipping_by_amount``).

It takes its place in the priority order like any campaign: when the total of the non-shipping lines, after
the discounts of the campaigns evaluated before it, is at least ``amount_condition``, every shipping unit's
price becomes 0. Deposit lines are added after the campaigns, so they are never part of that total. Give it
the lowest priority to judge the fully discounted basket.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from campaigns.bodies import Campaign
from campaigns.pricing.base import Basket, CampaignResult, CompiledCampaign, market_price
from core.declare import Field
from core.nodes import MarketPrice


class FreeShipping:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(), frozenset()  # looks at every basket

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        condition = market_price(campaign.definition["amount_condition"], basket.market)
        if condition is None:
            return CampaignResult(False, "market price missing")
        shipping = [
            (state, i)
            for state in basket.lines
            if state.line.is_shipping
            for i, is_locked in enumerate(state.locked)
            if not is_locked
        ]
        if not shipping:
            return CampaignResult(False, "no shipping line")
        goods = basket.goods()
        total = sum((sum(state.prices, start=Decimal(0)) for state in goods), start=Decimal(0))
        if total < condition:
            return CampaignResult(False, f"below amount ({total} of {condition})")
        units = sum(len(state.prices) for state in goods)
        changes = basket.discount(
            campaign,
            shipping,
            lambda price: price,
            type_value={"new_price_per_item": Decimal(0)},
            trigger={"items": "basket", "count": units},
        )
        return CampaignResult(True, "applied", changes) if changes else CampaignResult(False, "not cheaper")


class FreeShippingBody(Campaign, schema_name="FreeShippingByAmountCampaign"):
    """Free shipping once the goods, after the earlier campaigns, cost at least `amount_condition`."""

    amount_condition = Field(
        MarketPrice(),
        description=(
            "The shipping lines cost 0 once the other lines, after the earlier campaigns, total at least this, "
            "VAT included, in the currency's major unit: a number, or a market identifier to a number."
        ),
    )
