from __future__ import annotations

import pytest

from accounts.models import Market
from tests.factories import MarketFactory, StockLocationFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

NEW_MARKET = {
    "identifier": "se",
    "name": "Sweden",
    "currency": "SEK",
    "default_taxes": [{"name": "Moms", "rate": 0.25, "type": "vat"}],
}


def test_list_shows_only_the_markets_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    MarketFactory(account=other_tenant.account, identifier="no", currency="NOK")

    assert [m["identifier"] for m in results(api.get("markets"))] == ["dk"]


def test_list_is_paginated(api: AdminApi) -> None:
    body = api.get("markets").json()

    assert set(body) == {"count", "next", "previous", "results"}


def test_create_answers_201_with_the_market(api: AdminApi) -> None:
    response = api.post("markets", NEW_MARKET)

    assert response.status_code == 201
    assert response.json() == {**NEW_MARKET, "created_at": response.json()["created_at"]}
    assert Market.objects.filter(account=api.tenant.account, identifier="se").exists()


def test_create_rejects_a_currency_that_is_not_iso_4217(api: AdminApi) -> None:
    response = api.post("markets", {**NEW_MARKET, "currency": "XYZ"})

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"
    assert error_fields(response) == {"currency"}


def test_create_rejects_invalid_default_taxes(api: AdminApi) -> None:
    response = api.post("markets", {**NEW_MARKET, "default_taxes": [{"name": "VAT", "rate": 25, "type": "vat"}]})

    assert response.status_code == 400
    assert error_fields(response) == {"default_taxes"}


def test_create_rejects_a_duplicate_identifier_naming_the_field(api: AdminApi) -> None:
    response = api.post("markets", {**NEW_MARKET, "identifier": "dk"})

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "identifier", "message": "A market with the identifier 'dk' already exists.", "code": "duplicate"}
    ]


def test_create_rejects_an_identifier_with_forbidden_characters(api: AdminApi) -> None:
    response = api.post("markets", {**NEW_MARKET, "identifier": "se/1"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_an_identifier_used_by_another_account_is_free(api: AdminApi, other_tenant: Tenant) -> None:
    MarketFactory(account=other_tenant.account, identifier="se", currency="SEK")

    assert api.post("markets", NEW_MARKET).status_code == 201


def test_retrieve_by_identifier(api: AdminApi) -> None:
    response = api.get("markets/dk")

    assert response.status_code == 200
    assert response.json()["currency"] == "DKK"


def test_an_identifier_with_a_dot_is_addressable(api: AdminApi) -> None:
    api.post("markets", {**NEW_MARKET, "identifier": "se.north"})

    assert api.get("markets/se.north").status_code == 200


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_a_market_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, method: str) -> None:
    MarketFactory(account=other_tenant.account, identifier="no", currency="NOK")
    response = api.call(method, "markets/no", NEW_MARKET)

    assert response.status_code == 404
    assert response.json() == {"status": "ERROR", "message": "Not found."}
    assert Market.objects.filter(account=other_tenant.account, identifier="no", currency="NOK").exists()


def test_put_replaces_the_market_and_resets_omitted_optional_fields(api: AdminApi) -> None:
    response = api.put("markets/dk", {"identifier": "dk", "currency": "EUR"})

    assert response.status_code == 200
    assert response.json()["currency"] == "EUR"
    assert response.json()["name"] == ""
    assert response.json()["default_taxes"] == []


def test_put_requires_the_required_fields(api: AdminApi) -> None:
    response = api.put("markets/dk", {"name": "Danmark"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier", "currency"}


def test_patch_changes_only_the_given_fields(api: AdminApi) -> None:
    response = api.patch("markets/dk", {"name": "Danmark"})

    assert response.status_code == 200
    assert response.json()["name"] == "Danmark"
    assert response.json()["currency"] == "DKK"
    assert response.json()["default_taxes"] == [{"name": "VAT", "rate": 0.25, "type": "vat"}]


def test_patch_validates_the_currency(api: AdminApi) -> None:
    response = api.patch("markets/dk", {"currency": "kroner"})

    assert response.status_code == 400
    assert error_fields(response) == {"currency"}


def test_renaming_to_an_identifier_in_use_is_400(api: AdminApi) -> None:
    api.post("markets", NEW_MARKET)

    response = api.patch("markets/se", {"identifier": "dk"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_renaming_moves_the_market_to_the_new_identifier(api: AdminApi) -> None:
    api.patch("markets/dk", {"identifier": "denmark"})

    assert api.get("markets/denmark").status_code == 200
    assert api.get("markets/dk").status_code == 404


def test_deleting_a_market_used_by_a_stock_location_is_409(api: AdminApi) -> None:
    response = api.delete("markets/dk")

    assert response.status_code == 409
    assert response.json()["status"] == "ERROR"
    assert "shop-1" in response.json()["message"]
    assert Market.objects.filter(account=api.tenant.account, identifier="dk").exists()


def test_deleting_an_unused_market_answers_204(api: AdminApi) -> None:
    api.post("markets", NEW_MARKET)

    response = api.delete("markets/se")

    assert response.status_code == 204
    assert not Market.objects.filter(account=api.tenant.account, identifier="se").exists()


def test_a_market_in_use_by_many_stock_locations_names_a_few(api: AdminApi) -> None:
    for n in range(7):
        StockLocationFactory(account=api.tenant.account, market=api.tenant.market, identifier=f"extra-{n}")

    response = api.delete("markets/dk")

    assert response.status_code == 409
    assert response.json()["message"].count("extra-") == 5
