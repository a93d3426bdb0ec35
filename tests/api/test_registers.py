from __future__ import annotations

import pytest

from tests.factories import RegisterFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant


def test_create_resolves_the_stock_location_by_identifier(api: AdminApi) -> None:
    response = api.post("registers", {"identifier": "till-1", "name": "Till 1", "stock_location": "shop-1"})

    assert response.status_code == 201
    assert response.json() == {
        "identifier": "till-1",
        "name": "Till 1",
        "stock_location": "shop-1",
        "payment_types": [
            {"identifier": "cash", "should_be_reconciled": True},
            {"identifier": "card.external", "should_be_reconciled": False},
        ],
        "created_at": response.json()["created_at"],
    }


def test_create_treats_a_stock_location_of_another_account_as_unknown(api: AdminApi, other_tenant: Tenant) -> None:
    other_tenant.stock_location.identifier = "depot"
    other_tenant.stock_location.save(update_fields=["identifier"])

    response = api.post("registers", {"identifier": "till-1", "stock_location": "depot"})

    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "stock_location",
        "message": "Unknown stock location 'depot'.",
        "code": "unknown",
    }


def test_create_rejects_a_duplicate_identifier(api: AdminApi) -> None:
    RegisterFactory(account=api.tenant.account, stock_location=api.tenant.stock_location, identifier="till-1")

    response = api.post("registers", {"identifier": "till-1", "stock_location": "shop-1"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_list_shows_only_the_registers_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    RegisterFactory(account=api.tenant.account, stock_location=api.tenant.stock_location, identifier="till-1")
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="till-9")

    assert [r["identifier"] for r in results(api.get("registers"))] == ["till-1"]


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_register_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, method: str) -> None:
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="till-9")
    response = api.call(method, "registers/till-9", {"name": "x"})

    assert response.status_code == 404


def test_delete_answers_204(api: AdminApi) -> None:
    RegisterFactory(account=api.tenant.account, stock_location=api.tenant.stock_location, identifier="till-1")

    assert api.delete("registers/till-1").status_code == 204
    assert api.get("registers/till-1").status_code == 404
