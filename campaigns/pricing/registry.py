"""Every campaign type and product rule type, registered once: its spec type code, the family that prices it
and the schema that validates its import (both declared in the family's module).

A new campaign type is a family module (or a new schema in one) and one line below: the import endpoint, the
pricing engine, the customer-discount answers and the admin's choices all read this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaigns.pricing import count_or_more, free_shipping, new_price, product_rules, stair, tag
from campaigns.pricing.base import Family
from campaigns.schema import CAMPAIGN_COMMON
from core.nodes import INVALID, Enum, Obj, Report, join


@dataclass(frozen=True)
class CampaignType:
    family: Family
    schema: Obj


CAMPAIGN_TYPES: dict[str, CampaignType] = {
    "percentage_discount-count_or_more-single_product": CampaignType(
        count_or_more.SingleProduct(), count_or_more.SINGLE_PRODUCT_SCHEMA
    ),
    "percentage_discount-count_or_more-multiple_products": CampaignType(
        count_or_more.MultipleProducts(), count_or_more.MULTIPLE_PRODUCTS_SCHEMA
    ),
    "percentage_discount-tag": CampaignType(tag.Tag(), tag.SCHEMA),
    "percentage_discount-count_or_more-tag": CampaignType(count_or_more.Tag(), count_or_more.TAG_SCHEMA),
    "new_price_discount-single_product": CampaignType(new_price.SingleProduct(), new_price.SINGLE_PRODUCT_SCHEMA),
    "new_price_discount-count_or_more-single_product": CampaignType(
        new_price.CountOrMoreSingleProduct(), new_price.COUNT_OR_MORE_SINGLE_PRODUCT_SCHEMA
    ),
    "new_price_discount-stair-single_product": CampaignType(
        stair.NewPriceStair(), stair.NEW_PRICE_SINGLE_PRODUCT_SCHEMA
    ),
    "percentage_discount-stair-single_product": CampaignType(
        stair.PercentageStair(), stair.PERCENTAGE_SINGLE_PRODUCT_SCHEMA
    ),
    "percentage_discount-stair-tag": CampaignType(stair.PercentageStair(), stair.PERCENTAGE_TAG_SCHEMA),
    "amount_discount-stair-tag": CampaignType(stair.AmountStair(), stair.AMOUNT_TAG_SCHEMA),
    "free_shipping_by_amount": CampaignType(free_shipping.FreeShipping(), free_shipping.SCHEMA),
}
CAMPAIGN_TYPE = Enum(CAMPAIGN_TYPES)

PRODUCT_RULE_TYPES = {
    "container_deposit": product_rules.ContainerDeposit(),
}
PRODUCT_RULE = product_rules.SCHEMA


def check_campaign(value: Any, path: str, report: Report) -> Any:
    """A campaign is checked against the schema of its own type."""
    kind = value.get("type") if isinstance(value, dict) else None
    registered = CAMPAIGN_TYPES.get(kind) if isinstance(kind, str) else None
    if registered is not None:
        return registered.schema.check(value, path, report)
    CAMPAIGN_COMMON.check(value, path, report)
    if isinstance(kind, str):
        CAMPAIGN_TYPE.check(kind, join(path, "type"), report)
    return INVALID


def check_product_rule(value: Any, path: str, report: Report) -> Any:
    return PRODUCT_RULE.check(value, path, report)
