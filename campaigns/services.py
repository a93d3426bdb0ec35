"""Campaign and product rule writes, per market (spec: Discount campaign, Product rule, Endpoints A rule 5)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from accounts.models import Account, Market
from campaigns.models import Campaign, PricingVersion, ProductRule

CAMPAIGN_FIELDS = ["type", "name", "display_name", "priority", "members_only", "continue_evaluation", "definition"]
RULE_FIELDS = ["type", "name", "display_name", "tag", "product_group", "price", "definition"]


def upsert_campaigns(*, account: Account, markets: Sequence[Market], items: Sequence[dict[str, Any]]) -> int:
    """Store each campaign in each market, overwriting one with the same id. Ids must be distinct."""
    rows = [
        Campaign(
            account=account,
            market=market,
            campaign_id=c["id"],
            type=c["type"],
            name=c["name"],
            display_name=c["display_name"],
            priority=c["priority"],
            members_only=c.get("members_only", False),
            continue_evaluation=c.get("continue_evaluation", False),
            definition=c,
        )
        for market in markets
        for c in items
    ]
    with transaction.atomic():
        Campaign.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["market", "campaign_id"],
            update_fields=[*CAMPAIGN_FIELDS, "updated_at"],
        )
        bump_pricing_version(markets=markets)
    return len(rows)


def upsert_product_rules(*, account: Account, markets: Sequence[Market], items: Sequence[dict[str, Any]]) -> int:
    """Store each rule in each market; rules with an existing id are overwritten (spec: Product rule)."""
    rows = [
        ProductRule(
            account=account,
            market=market,
            rule_id=r["id"],
            type=r["type"],
            name=r["name"],
            display_name=r["display_name"],
            tag=r["tag"],
            product_group=r.get("product_group", ""),
            price=r["price"],
            definition=r,
        )
        for market in markets
        for r in items
    ]
    with transaction.atomic():
        ProductRule.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["market", "rule_id"],
            update_fields=[*RULE_FIELDS, "updated_at"],
        )
        bump_pricing_version(markets=markets)
    return len(rows)


def bump_pricing_version(*, markets: Sequence[Market]) -> None:
    """A new pricing version for each market, so every process drops its compiled copy (campaigns.pricing).
    Called inside the transaction of the write: a reader never sees the new version without the new rows."""
    # One statement, no read-modify-write: concurrent imports to one market each leave a fresh token.
    PricingVersion.objects.bulk_create(
        [PricingVersion(market=market, version=uuid.uuid4()) for market in markets],
        update_conflicts=True,
        unique_fields=["market"],
        update_fields=["version", "updated_at"],
    )


def _delete(
    model: type[Campaign] | type[ProductRule],
    id_field: str,
    *,
    account: Account,
    markets: Sequence[Market],
    ids: Sequence[str],
) -> tuple[list[str], list[str]]:
    with transaction.atomic():
        rows = model.objects.filter(account=account, market__in=markets, **{f"{id_field}__in": ids})
        found = set(rows.values_list(id_field, flat=True))
        rows.delete()
        bump_pricing_version(markets=markets)
    return [i for i in ids if i in found], [i for i in ids if i not in found]


def delete_campaigns(*, account: Account, markets: Sequence[Market], ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """Delete the campaigns with these ids from these markets. Returns (deleted ids, ids not found)."""
    return _delete(Campaign, "campaign_id", account=account, markets=markets, ids=ids)


def delete_product_rules(
    *, account: Account, markets: Sequence[Market], ids: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Delete the product rules with these ids from these markets. Returns (deleted ids, ids not found)."""
    return _delete(ProductRule, "rule_id", account=account, markets=markets, ids=ids)
