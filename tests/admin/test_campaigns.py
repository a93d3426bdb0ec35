"""Campaigns and product rules in the admin: searchable and filterable, managed by imports only."""

from __future__ import annotations

from campaigns.models import Campaign, ProductRule
from tests.factories import CampaignFactory, MarketFactory, ProductRuleFactory
from tests.support.admin import admin_url, listed


def test_campaign_search_finds_by_id_and_name(admin_client, tenant) -> None:
    wanted = CampaignFactory(account=tenant.account, market=tenant.market, campaign_id="summer-24", name="Summer sale")
    CampaignFactory(account=tenant.account, market=tenant.market, campaign_id="winter-24", name="Winter sale")

    assert listed(admin_client.get(admin_url(Campaign, "changelist"), {"q": "summer-24"})) == [wanted]
    assert listed(admin_client.get(admin_url(Campaign, "changelist"), {"q": "summer sale"})) == [wanted]


def test_campaigns_filter_by_market_and_type(admin_client, tenant) -> None:
    sweden = MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    wanted = CampaignFactory(account=tenant.account, market=sweden, type="product_discount")
    CampaignFactory(account=tenant.account, market=sweden, type="basket_discount")
    CampaignFactory(account=tenant.account, market=tenant.market, type="product_discount")

    rows = listed(
        admin_client.get(
            admin_url(Campaign, "changelist"), {"market__id__exact": sweden.pk, "type": "product_discount"}
        )
    )

    assert rows == [wanted]


def test_product_rule_search_finds_by_tag(admin_client, tenant) -> None:
    wanted = ProductRuleFactory(account=tenant.account, market=tenant.market, tag="bottle-deposit")
    ProductRuleFactory(account=tenant.account, market=tenant.market, tag="can-deposit")

    assert listed(admin_client.get(admin_url(ProductRule, "changelist"), {"q": "bottle"})) == [wanted]


def test_product_rules_filter_by_type(admin_client, tenant) -> None:
    wanted = ProductRuleFactory(account=tenant.account, market=tenant.market, type="age_limit")
    ProductRuleFactory(account=tenant.account, market=tenant.market, type="deposit")

    assert listed(admin_client.get(admin_url(ProductRule, "changelist"), {"type": "age_limit"})) == [wanted]


def test_campaign_refuses_a_post_to_change(admin_client, tenant) -> None:
    campaign = CampaignFactory(account=tenant.account, market=tenant.market, name="Summer sale")

    response = admin_client.post(admin_url(campaign, "change", campaign.pk), {"name": "Changed"})

    assert response.status_code == 403
    campaign.refresh_from_db()
    assert campaign.name == "Summer sale"
