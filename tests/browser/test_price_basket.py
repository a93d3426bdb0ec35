"""The "Price a basket" page in a real headless Chromium: from the campaign list to a priced basket with its
explanation."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.factories import AccountFactory, CampaignFactory, MarketFactory
from tests.support.campaigns import TSHIRTS_15


def test_staff_price_a_basket_from_the_campaign_list(admin_page: Page, artifacts: Path) -> None:
    account = AccountFactory(identifier="acme")
    market = MarketFactory(account=account, identifier="dk")
    CampaignFactory(
        account=account,
        market=market,
        campaign_id="tshirts-15",
        type=TSHIRTS_15["type"],
        name="T-shirts 15%",
        display_name="15% on 3",
        priority=10,
        definition=TSHIRTS_15,
    )
    tab = admin_page

    tab.goto("/admin/campaigns/campaign/")
    tab.click("a.price-basket-link")
    tab.select_option("#id_account", label="acme")
    tab.fill("#id_market", "dk")
    lines = [{"line_item_id": "li-1", "id": "tshirt", "quantity": 3, "unit_price": 9.95}]
    tab.fill("#id_line_items", json.dumps(lines))
    tab.click("input[name=_price]")

    expect(tab.locator(".basket-total")).to_have_text("25.38")
    expect(tab.locator("#priced-lines .line-discount")).to_contain_text("tshirts-15")
    expect(tab.locator("#explanation tr.fired")).to_contain_text("li-1 units 1, 2, 3: 9.95 → 8.46")
    tab.screenshot(path=artifacts / "admin-price-basket.png", full_page=True)
