"""Campaigns as the import stores them, for the tests that price baskets (the admin's page, the back-office's)."""

from __future__ import annotations

from typing import Any

from campaigns.models import Campaign
from tests.conftest import Tenant
from tests.factories import CampaignFactory

TSHIRTS_15 = {
    "id": "tshirts-15",
    "type": "percentage_discount-count_or_more-single_product",
    "name": "T-shirts 15%",
    "display_name": "15% on 3",
    "priority": 10,
    "product_id": "tshirt",
    "percentage": 0.15,
    "count": 3,
}
JEANS_10 = {**TSHIRTS_15, "id": "jeans-10", "name": "Jeans", "display_name": "10% jeans", "product_id": "jeans"}


def stored_campaign(tenant: Tenant, definition: dict[str, Any]) -> Campaign:
    """A campaign row as the import stores it: the columns mirror the definition."""
    return CampaignFactory(
        account=tenant.account,
        market=tenant.market,
        campaign_id=definition["id"],
        type=definition["type"],
        name=definition["name"],
        display_name=definition["display_name"],
        priority=definition["priority"],
        members_only=definition.get("members_only", False),
        definition=definition,
    )
