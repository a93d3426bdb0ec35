"""Percentage off every unit carrying a tag, unconditionally (spec: ``percentage_discount-tag``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from campaigns.bodies import PERCENTAGE, Campaign, OnTag
from campaigns.pricing.base import Basket, CampaignResult, CompiledCampaign
from campaigns.pricing.count_or_more import apply_percentage


class Tag:
    def keys(self, definition: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(), frozenset([definition["tag"]])

    def apply(self, campaign: CompiledCampaign, basket: Basket) -> CampaignResult:
        return apply_percentage(campaign, basket, count=None)


class TagBody(Campaign, OnTag, schema_name="PercentageTagCampaign"):
    """`percentage` off every unit with the tag."""

    percentage = PERCENTAGE
