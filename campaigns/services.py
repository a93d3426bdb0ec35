"""Campaign and product rule writes, per market (spec: Discount campaign, Product rule, Endpoints A rule 5)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import Account, Market
from campaigns.models import CAMPAIGN_COLUMNS, PRODUCT_RULE_COLUMNS, Campaign, PricingVersion, ProductRule
from campaigns.pricing import registry
from core.nodes import Report

# The columns whose field an item may leave out, and their value then.
_DEFAULTS: dict[str, Any] = {"members_only": False, "continue_evaluation": False, "product_group": ""}


def _upsert(
    model: type[Campaign] | type[ProductRule],
    id_field: str,
    columns: tuple[str, ...],
    *,
    account: Account,
    markets: Sequence[Market],
    items: Sequence[dict[str, Any]],
) -> int:
    """Store each item in each market, overwriting the row with the same id there, and bump the markets'
    pricing version in the same transaction."""

    def values(item: dict[str, Any]) -> dict[str, Any]:
        return {
            id_field: item["id"],
            **{name: item[name] if name not in _DEFAULTS else item.get(name, _DEFAULTS[name]) for name in columns},
            "definition": item,
        }

    rows = [model(account=account, market=market, **values(item)) for market in markets for item in items]
    with transaction.atomic():
        model.objects.bulk_create(
            rows,  # type: ignore[arg-type]  # rows are all of ``model``
            update_conflicts=True,
            unique_fields=["market", id_field],
            update_fields=[*columns, "definition", "updated_at"],
        )
        bump_pricing_version(markets=markets)
    return len(rows)


def upsert_campaigns(*, account: Account, markets: Sequence[Market], items: Sequence[dict[str, Any]]) -> int:
    """Store each campaign in each market, overwriting one with the same id. Ids must be distinct."""
    return _upsert(Campaign, "campaign_id", CAMPAIGN_COLUMNS, account=account, markets=markets, items=items)


def upsert_product_rules(*, account: Account, markets: Sequence[Market], items: Sequence[dict[str, Any]]) -> int:
    """Store each rule in each market; rules with an existing id are overwritten (spec: Product rule)."""
    return _upsert(ProductRule, "rule_id", PRODUCT_RULE_COLUMNS, account=account, markets=markets, items=items)


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


@dataclass(frozen=True)
class Definitions:
    """One kind of per-market definition an integrator imports and deletes (spec: Endpoints A rule 5): its noun in
    answers, the check of one item, and its writes."""

    noun: str
    check: Callable[[Any, str, Report], Any]
    upsert: Callable[..., int]
    delete: Callable[..., tuple[list[str], list[str]]]


CAMPAIGNS = Definitions("campaign", registry.check_campaign, upsert_campaigns, delete_campaigns)
PRODUCT_RULES = Definitions("product rule", registry.check_product_rule, upsert_product_rules, delete_product_rules)
