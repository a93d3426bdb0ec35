"""Back-office flows end to end in Chromium: log in, set up the shop structure, issue and revoke an API key,
read the import log and find an order."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from accounts import selectors
from accounts.models import ApiKey, Market, StockLocation
from imports.models import ImportStatus
from tests.factories import (
    AccountFactory,
    ImportItemFactory,
    IncomingOrderFactory,
    IntegrationFactory,
    StockLocationFactory,
)
from tests.support.browser import log_in, rows


def test_superuser_logs_in_to_the_styled_admin(page: Page, superuser, artifacts: Path) -> None:
    log_in(page)

    expect(page.locator("#site-name")).to_have_text("Retail back-office")
    expect(page.locator("#content-main")).to_contain_text("Shops and registers")
    expect(page.locator("#content-main")).to_contain_text("Import log")
    # The admin stylesheet is served: the header has its coloured background, not the browser default.
    background = page.evaluate("getComputedStyle(document.querySelector('#header')).backgroundColor")
    assert background not in ("", "rgba(0, 0, 0, 0)", "transparent")
    page.screenshot(path=artifacts / "admin-index.png", full_page=True)


def test_staff_creates_a_market_and_a_stock_location(admin_page: Page) -> None:
    AccountFactory(identifier="acme")
    page = admin_page

    page.goto("/admin/accounts/market/add/")
    page.select_option("#id_account", label="acme")
    page.fill("#id_identifier", "se")
    page.fill("#id_name", "Sweden")
    page.fill("#id_currency", "SEK")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist .success")).to_contain_text("was added successfully")

    page.goto("/admin/accounts/stocklocation/add/")
    page.select_option("#id_account", label="acme")
    page.fill("#id_identifier", "stockholm-1")
    page.fill("#id_name", "Stockholm City")
    page.select_option("#id_kind", "shop")
    page.select_option("#id_market", label="acme / se")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist .success")).to_contain_text("was added successfully")
    expect(rows(page).filter(has_text="stockholm-1")).to_have_count(1)

    market = Market.objects.get(account__identifier="acme", identifier="se")
    assert market.currency == "SEK"
    assert StockLocation.objects.get(identifier="stockholm-1").market == market


def test_api_key_is_shown_once_authenticates_and_is_revoked(admin_page: Page) -> None:
    integration = IntegrationFactory(account=AccountFactory(identifier="acme"), identifier="webshop")
    page = admin_page

    page.goto("/admin/accounts/apikey/add/")
    page.select_option("#id_integration", label="acme / webshop")
    page.fill("#id_name", "till sync")
    page.check("input[name=scopes][value=imports]")
    page.click("input[name=_save]")

    expect(page.locator(".messagelist")).to_contain_text("New API key (shown once, copy it now)")
    raw_key = page.locator("code.api-key").inner_text()
    assert re.fullmatch(r"rk_[0-9a-f]{8}[A-Za-z0-9_-]+", raw_key)
    api_key = selectors.api_key_for_credentials(
        account_identifier="acme", integration_identifier="webshop", raw_key=raw_key
    )
    assert api_key is not None and api_key.integration == integration
    assert api_key.key_hash not in page.content()

    page.reload()
    expect(rows(page)).to_have_count(1)
    expect(page.locator("code.api-key")).to_have_count(0)
    assert raw_key not in page.content()

    page.check(f"input[name=_selected_action][value='{api_key.pk}']")
    page.select_option("select[name=action]", "revoke_selected")
    page.click("button[name=index]")
    expect(page.locator(".messagelist .success")).to_contain_text("Revoked 1 API key(s).")
    expect(rows(page).first.locator("td.field-status")).to_have_text("Revoked")

    assert ApiKey.objects.get(pk=api_key.pk).revoked_at is not None
    assert (
        selectors.api_key_for_credentials(account_identifier="acme", integration_identifier="webshop", raw_key=raw_key)
        is None
    )


def test_import_log_filtered_to_failures_lists_only_failed_items(admin_page: Page, artifacts: Path) -> None:
    integration = IntegrationFactory(account=AccountFactory(identifier="acme"), identifier="webshop")
    for status, identifier in [
        (ImportStatus.FAILURE, "A-1"),
        (ImportStatus.FAILURE, "A-2"),
        (ImportStatus.SUCCESS, "B-1"),
        (ImportStatus.PENDING, "C-1"),
        (ImportStatus.REJECTED, "D-1"),
    ]:
        ImportItemFactory(account=integration.account, integration=integration, status=status, identifier=identifier)
    page = admin_page

    page.goto("/admin/imports/importitem/")
    expect(rows(page)).to_have_count(5)
    page.locator("#changelist-filter details[data-filter-title='status'] a", has_text="Failure").click()

    expect(page).to_have_url(re.compile(r"status__exact=failure"))
    expect(rows(page)).to_have_count(2)
    expect(rows(page).locator("td.field-status")).to_have_text(["Failure", "Failure"])
    expect(rows(page).locator("td.field-identifier")).to_have_text(["A-2", "A-1"])
    page.screenshot(path=artifacts / "import-log-failures.png", full_page=True)


def test_incoming_orders_are_found_by_order_identifier(admin_page: Page) -> None:
    shop = StockLocationFactory(account=AccountFactory(identifier="acme"), identifier="shop-1")
    for order_identifier in ("WEB-10042", "WEB-20001", "WEB-30017"):
        IncomingOrderFactory(account=shop.account, stock_location=shop, order_identifier=order_identifier)
    page = admin_page

    page.goto("/admin/orders/incomingorder/")
    page.fill("#searchbar", "10042")
    page.press("#searchbar", "Enter")

    expect(page).to_have_url(re.compile(r"q=10042"))
    expect(rows(page)).to_have_count(1)
    expect(rows(page).locator("th.field-order_identifier")).to_have_text("WEB-10042")
