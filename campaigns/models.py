"""Discount campaigns and product rules, stored per market (spec: Discount campaign, Product rule)."""

from __future__ import annotations

from django.db import models

from accounts.models import AccountOwned, Market
from campaigns.pricing.registry import CAMPAIGN_TYPES, PRODUCT_RULE_TYPES
from core.jsonenc import DecimalJSONField


def campaign_types() -> list[tuple[str, str]]:
    """The registered campaign types (a callable, so a new type needs no migration)."""
    return [(code, code) for code in CAMPAIGN_TYPES]


def product_rule_types() -> list[tuple[str, str]]:
    return [(code, code) for code in PRODUCT_RULE_TYPES]


# The columns a row copies from its imported definition (campaigns.services), in the order the API and the
# admin show them; the whole definition is stored beside them.
CAMPAIGN_COLUMNS = ("type", "name", "display_name", "priority", "members_only", "continue_evaluation")
PRODUCT_RULE_COLUMNS = ("type", "name", "display_name", "tag", "product_group", "price")


class Campaign(AccountOwned):
    market = models.ForeignKey(Market, on_delete=models.CASCADE, related_name="campaigns")
    campaign_id = models.CharField(max_length=255)
    type = models.CharField(max_length=64, choices=campaign_types)
    name = models.CharField(max_length=255)
    display_name = models.CharField(max_length=255)
    priority = models.DecimalField(max_digits=20, decimal_places=6)
    members_only = models.BooleanField(default=False)
    continue_evaluation = models.BooleanField(default=False)
    definition = DecimalJSONField(help_text="The campaign exactly as imported (validated).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["market", "-priority", "campaign_id"]
        constraints = [models.UniqueConstraint(fields=["market", "campaign_id"], name="campaign_unique_per_market")]

    def __str__(self) -> str:
        return self.campaign_id


class ProductRule(AccountOwned):
    market = models.ForeignKey(Market, on_delete=models.CASCADE, related_name="product_rules")
    rule_id = models.CharField(max_length=255)
    type = models.CharField(max_length=32, choices=product_rule_types)
    name = models.CharField(max_length=255)
    display_name = DecimalJSONField(help_text="L10nString.")
    tag = models.CharField(max_length=255)
    product_group = models.CharField(max_length=255, blank=True)
    price = DecimalJSONField(help_text="MarketPrice: a number or {market: number}.")
    definition = DecimalJSONField(help_text="The rule exactly as imported (validated).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["market", "rule_id"]
        constraints = [models.UniqueConstraint(fields=["market", "rule_id"], name="product_rule_unique_per_market")]

    def __str__(self) -> str:
        return self.rule_id


class PricingVersion(models.Model):
    """A token that changes with every campaign or product rule write of a market, in the same transaction.

    The pricing engine caches a market's compiled campaigns per process and reads this one row per call to
    know whether its copy is current, so every process of a deployment sees a write at once. A random token,
    not a counter: a market deleted and created again (tests, restores) must never match an old copy.
    """

    market = models.OneToOneField(Market, on_delete=models.CASCADE, related_name="pricing_version")
    version = models.UUIDField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.market_id}: {self.version}"
