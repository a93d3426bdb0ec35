from __future__ import annotations

import pytest

from tests.factories import CashierFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

NEW_CASHIER = {
    "identifier": "cashier-7",
    "display_name": "AB",
    "full_name": "Anne Berg",
    "image_url": "https://images.example.com/anne.png",
}


def test_create_answers_201_with_the_cashier(api: AdminApi) -> None:
    response = api.post("cashiers", NEW_CASHIER)

    assert response.status_code == 201
    assert response.json() == {**NEW_CASHIER, "created_at": response.json()["created_at"]}


def test_create_requires_the_display_name(api: AdminApi) -> None:
    response = api.post("cashiers", {"identifier": "cashier-7"})

    assert response.status_code == 400
    assert error_fields(response) == {"display_name"}


def test_create_rejects_an_image_url_that_is_not_https(api: AdminApi) -> None:
    response = api.post("cashiers", {**NEW_CASHIER, "image_url": "http://images.example.com/anne.png"})

    assert response.status_code == 400
    assert error_fields(response) == {"image_url"}


def test_create_rejects_a_duplicate_identifier(api: AdminApi) -> None:
    CashierFactory(account=api.tenant.account, identifier="cashier-7")

    response = api.post("cashiers", NEW_CASHIER)

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_an_identifier_with_an_at_sign_is_addressable(api: AdminApi) -> None:
    api.post("cashiers", {**NEW_CASHIER, "identifier": "anne@shop-1"})

    assert api.get("cashiers/anne@shop-1").json()["identifier"] == "anne@shop-1"


def test_list_shows_only_the_cashiers_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    CashierFactory(account=api.tenant.account, identifier="cashier-1")
    CashierFactory(account=other_tenant.account, identifier="cashier-2")

    assert [c["identifier"] for c in results(api.get("cashiers"))] == ["cashier-1"]


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_a_cashier_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, method: str) -> None:
    CashierFactory(account=other_tenant.account, identifier="cashier-2")
    response = api.call(method, "cashiers/cashier-2", NEW_CASHIER)

    assert response.status_code == 404


def test_delete_answers_204(api: AdminApi) -> None:
    CashierFactory(account=api.tenant.account, identifier="cashier-1")

    assert api.delete("cashiers/cashier-1").status_code == 204
