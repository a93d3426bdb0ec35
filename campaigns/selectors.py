"""Campaign and product rule reads. Every function takes the account first."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import Account
from campaigns.models import Campaign, ProductRule


def campaigns(*, account: Account, market: str | None = None, type: str | None = None) -> QuerySet[Campaign]:
    """Campaigns of the account per market, in evaluation order (highest priority first)."""
    queryset = Campaign.objects.filter(account=account).select_related("market")
    if market:
        queryset = queryset.filter(market__identifier=market)
    if type:
        queryset = queryset.filter(type=type)
    return queryset.order_by("market__identifier", "-priority", "campaign_id", "id")


def product_rules(*, account: Account, market: str | None = None) -> QuerySet[ProductRule]:
    """Product rules of the account per market, by rule id."""
    queryset = ProductRule.objects.filter(account=account).select_related("market")
    if market:
        queryset = queryset.filter(market__identifier=market)
    return queryset.order_by("market__identifier", "rule_id", "id")
