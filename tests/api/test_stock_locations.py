from __future__ import annotations

import pytest

from accounts.models import StockLocation
from tests.factories import IncomingOrderFactory, MarketFactory, RegisterFactory, StockLocationFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

NEW_SHOP = {
    "identifier": "shop-2",
    "name": "Aarhus",
    "kind": "shop",
    "market": "dk",
    "street": "Søndergade 1",
    "city": "Aarhus C",
    "zip": "8000",
    "country_code": "DK",
    "vat_number": "DK12345678",
}


def test_list_shows_only_the_stock_locations_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    assert [s["identifier"] for s in results(api.get("stock-locations"))] == ["shop-1"]


def test_create_resolves_the_market_by_identifier(api: AdminApi) -> None:
    response = api.post("stock-locations", NEW_SHOP)

    assert response.status_code == 201
    assert response.json() == {**NEW_SHOP, "created_at": response.json()["created_at"]}
    assert StockLocation.objects.get(account=api.tenant.account, identifier="shop-2").market == api.tenant.market


def test_create_rejects_an_unknown_market(api: AdminApi) -> None:
    response = api.post("stock-locations", {**NEW_SHOP, "market": "fr"})

    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "market", "message": "Unknown market 'fr'.", "code": "unknown"}]


def test_create_treats_a_market_of_another_account_as_unknown(api: AdminApi, other_tenant: Tenant) -> None:
    MarketFactory(account=other_tenant.account, identifier="no", currency="NOK")

    response = api.post("stock-locations", {**NEW_SHOP, "market": "no"})

    assert response.status_code == 400
    assert response.json()["errors"][0]["message"] == "Unknown market 'no'."


def test_create_rejects_a_duplicate_identifier(api: AdminApi) -> None:
    response = api.post("stock-locations", {**NEW_SHOP, "identifier": "shop-1"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_create_rejects_an_unknown_kind(api: AdminApi) -> None:
    response = api.post("stock-locations", {**NEW_SHOP, "kind": "truck"})

    assert response.status_code == 400
    assert error_fields(response) == {"kind"}


def test_create_upper_cases_the_country_code(api: AdminApi) -> None:
    response = api.post("stock-locations", {**NEW_SHOP, "country_code": "dk"})

    assert response.json()["country_code"] == "DK"


def test_patch_moves_the_stock_location_to_another_market(api: AdminApi) -> None:
    MarketFactory(account=api.tenant.account, identifier="se", currency="SEK")

    response = api.patch("stock-locations/shop-1", {"market": "se"})

    assert response.status_code == 200
    assert response.json()["market"] == "se"


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_stock_location_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, method: str) -> None:
    StockLocationFactory(account=other_tenant.account, market=other_tenant.market, identifier="depot")
    response = api.call(method, "stock-locations/depot", {"name": "x"})

    assert response.status_code == 404


def test_deleting_a_stock_location_with_registers_is_409(api: AdminApi) -> None:
    RegisterFactory(account=api.tenant.account, stock_location=api.tenant.stock_location, identifier="till-1")

    response = api.delete("stock-locations/shop-1")

    assert response.status_code == 409
    assert "till-1" in response.json()["message"]


def test_deleting_a_stock_location_with_orders_is_409(api: AdminApi) -> None:
    IncomingOrderFactory(account=api.tenant.account, stock_location=api.tenant.stock_location)

    assert api.delete("stock-locations/shop-1").status_code == 409


def test_deleting_an_unused_stock_location_answers_204(api: AdminApi) -> None:
    api.post("stock-locations", NEW_SHOP)

    assert api.delete("stock-locations/shop-2").status_code == 204
