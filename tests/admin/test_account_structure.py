"""Markets, stock locations and the rest of the shop structure: full CRUD, validated by the models."""

from __future__ import annotations

from accounts.models import Market, StockLocation
from tests.factories import MarketFactory, StockLocationFactory
from tests.support.admin import admin_url, listed


def market_form(tenant, **overrides: str) -> dict[str, str]:
    return {
        "account": str(tenant.account.pk),
        "identifier": "se",
        "name": "Sweden",
        "currency": "SEK",
        "default_taxes": '[{"name": "VAT", "rate": 0.25, "type": "vat"}]',
        **overrides,
    }


def test_market_is_created_from_the_add_form(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(Market, "add"), market_form(tenant))

    assert response.status_code == 302
    assert Market.objects.get(account=tenant.account, identifier="se").currency == "SEK"


def test_market_with_an_unknown_currency_is_refused(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(Market, "add"), market_form(tenant, currency="XXQ"))

    assert response.status_code == 200
    assert "not an ISO 4217 currency code" in str(response.context["adminform"].form.errors["currency"])
    assert not Market.objects.filter(identifier="se").exists()


def test_market_identifier_is_unique_per_account(admin_client, tenant) -> None:
    response = admin_client.post(admin_url(Market, "add"), market_form(tenant, identifier="dk"))

    assert response.status_code == 200
    assert Market.objects.filter(account=tenant.account, identifier="dk").count() == 1


def test_unused_market_can_be_deleted(admin_client, tenant) -> None:
    market = MarketFactory(account=tenant.account, identifier="no", currency="NOK")

    response = admin_client.post(admin_url(Market, "delete", market.pk), {"post": "yes"})

    assert response.status_code == 302
    assert not Market.objects.filter(pk=market.pk).exists()


def test_stock_location_with_another_accounts_market_is_refused(admin_client, tenant, other_tenant) -> None:
    response = admin_client.post(
        admin_url(StockLocation, "add"),
        {
            "account": str(tenant.account.pk),
            "identifier": "shop-2",
            "kind": "shop",
            "market": str(other_tenant.market.pk),
        },
    )

    assert response.status_code == 200
    assert "another account" in str(response.context["adminform"].form.errors["market"])
    assert not StockLocation.objects.filter(identifier="shop-2").exists()


def test_market_choices_name_their_account(admin_client, tenant, other_tenant) -> None:
    content = admin_client.get(admin_url(StockLocation, "add")).content.decode()

    assert "acme / dk" in content
    assert "globex / dk" in content


def test_market_search_finds_by_identifier_and_name(admin_client, tenant) -> None:
    MarketFactory(account=tenant.account, identifier="se", name="Sweden", currency="SEK")

    assert [m.identifier for m in listed(admin_client.get(admin_url(Market, "changelist"), {"q": "se"}))] == ["se"]
    assert [m.identifier for m in listed(admin_client.get(admin_url(Market, "changelist"), {"q": "swed"}))] == ["se"]


def test_markets_filter_by_account(admin_client, tenant, other_tenant) -> None:
    rows = listed(admin_client.get(admin_url(Market, "changelist"), {"account__id__exact": other_tenant.account.pk}))

    assert [m.account for m in rows] == [other_tenant.account]


def test_stock_locations_filter_by_market(admin_client, tenant) -> None:
    sweden = MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    StockLocationFactory(account=tenant.account, market=sweden, identifier="stockholm")

    rows = listed(admin_client.get(admin_url(StockLocation, "changelist"), {"market__id__exact": sweden.pk}))

    assert [s.identifier for s in rows] == ["stockholm"]


def test_stock_locations_filter_by_kind(admin_client, tenant) -> None:
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="dc-1", kind="warehouse")

    rows = listed(admin_client.get(admin_url(StockLocation, "changelist"), {"kind__exact": "warehouse"}))

    assert [s.identifier for s in rows] == ["dc-1"]


def test_market_filter_choices_narrow_to_the_chosen_account(admin_client, tenant, other_tenant) -> None:
    # A filter with a single choice is not shown at all.
    MarketFactory(account=other_tenant.account, identifier="se", currency="SEK")

    response = admin_client.get(admin_url(StockLocation, "changelist"), {"account__id__exact": other_tenant.account.pk})
    content = response.content.decode()

    assert "globex / dk" in content
    assert "globex / se" in content
    assert "acme / dk" not in content
