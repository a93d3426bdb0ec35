"""Every campaign type and product rule type, registered once: its spec type code, the family that prices it
and the body that validates its import (both declared in the family's module).

A new campaign type is a family module (or a new body in one) and one line below: the import endpoint and its
request schema (``CAMPAIGN``, a ``oneOf`` of the bodies with a discriminator on ``type``), the pricing engine,
the customer-discount answers and the admin's choices all read this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaigns.bodies import Campaign, ProductRule
from campaigns.pricing import count_or_more, free_shipping, new_price, product_rules, stair, tag
from campaigns.pricing.base import Family
from core.declare import BodyMeta
from core.nodes import OneOfBy, Report


@dataclass(frozen=True)
class CampaignType:
    family: Family
    schema: BodyMeta


@dataclass(frozen=True)
class ProductRuleType:
    family: product_rules.ContainerDeposit
    schema: BodyMeta


CAMPAIGN_TYPES: dict[str, CampaignType] = {
    "percentage_discount-count_or_more-single_product": CampaignType(
        count_or_more.SingleProduct(), count_or_more.SingleProductBody
    ),
    "percentage_discount-count_or_more-multiple_products": CampaignType(
        count_or_more.MultipleProducts(), count_or_more.MultipleProductsBody
    ),
    "percentage_discount-tag": CampaignType(tag.Tag(), tag.TagBody),
    "percentage_discount-count_or_more-tag": CampaignType(count_or_more.Tag(), count_or_more.TagBody),
    "new_price_discount-single_product": CampaignType(new_price.SingleProduct(), new_price.SingleProductBody),
    "new_price_discount-count_or_more-single_product": CampaignType(
        new_price.CountOrMoreSingleProduct(), new_price.CountOrMoreSingleProductBody
    ),
    "new_price_discount-stair-single_product": CampaignType(stair.NewPriceStair(), stair.NewPriceSingleProductBody),
    "percentage_discount-stair-single_product": CampaignType(
        stair.PercentageStair(), stair.PercentageSingleProductBody
    ),
    "percentage_discount-stair-tag": CampaignType(stair.PercentageStair(), stair.PercentageTagBody),
    "amount_discount-stair-tag": CampaignType(stair.AmountStair(), stair.AmountTagBody),
    "free_shipping_by_amount": CampaignType(free_shipping.FreeShipping(), free_shipping.FreeShippingBody),
}

PRODUCT_RULE_TYPES: dict[str, ProductRuleType] = {
    "container_deposit": ProductRuleType(product_rules.ContainerDeposit(), product_rules.ContainerDepositBody),
}

# An imported campaign (product rule) is checked against the body of its own type; the request schema is the
# oneOf of the registered bodies with a discriminator on ``type``.
CAMPAIGN = OneOfBy("type", {code: t.schema for code, t in CAMPAIGN_TYPES.items()}, common=Campaign)
PRODUCT_RULE = OneOfBy("type", {code: t.schema for code, t in PRODUCT_RULE_TYPES.items()}, common=ProductRule)


def check_campaign(value: Any, path: str, report: Report) -> Any:
    """A campaign is checked against the body of its own type."""
    return CAMPAIGN.check(value, path, report)


def check_product_rule(value: Any, path: str, report: Report) -> Any:
    return PRODUCT_RULE.check(value, path, report)
