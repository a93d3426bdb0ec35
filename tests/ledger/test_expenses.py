"""Expenses through /api/v1/expenses/ (spec: Expense)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from ledger.models import Expense
from tests.factories import MarketFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

VAT = {"name": "VAT", "rate": 0.25, "type": "vat"}


def expense_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "coffee", "name": {"da": "Kaffe", "en": "Coffee"}, "taxes": [VAT]}
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


def test_create_answers_the_expense(api) -> None:
    response = api.post("expenses", expense_body())

    assert response.status_code == 201
    assert {k: v for k, v in response.json().items() if k != "created_at"} == {
        "id": "coffee",
        "name": {"da": "Kaffe", "en": "Coffee"},
        "taxes": [VAT],
    }


def test_taxes_may_be_given_per_market(api, tenant) -> None:
    response = api.post("expenses", expense_body(taxes={"dk": [VAT]}))

    assert response.status_code == 201
    assert Expense.objects.get().taxes == {"dk": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}]}


def test_taxes_per_market_name_only_markets_of_the_account(api, other_tenant) -> None:
    MarketFactory(account=other_tenant.account, identifier="no", currency="NOK")

    response = api.post("expenses", expense_body(taxes={"dk": [VAT], "no": [VAT]}))

    assert response.status_code == 400
    assert error_fields(response) == {"taxes.no"}
    assert not Expense.objects.exists()


def test_taxes_may_be_left_out(api) -> None:
    assert api.post("expenses", expense_body(taxes=...)).json()["taxes"] is None


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"id": ...}, "id"),
        ({"name": ...}, "name"),
        ({"id": ["coffee"]}, "id"),
        ({"id": "a/b"}, "id"),
        ({"name": 3}, "name"),
        ({"taxes": "VAT"}, "taxes"),
        ({"taxes": [{"name": "VAT", "rate": "0.25", "type": "vat"}]}, "taxes[0].rate"),
        ({"taxes": {"dk": {"name": "VAT"}}}, "taxes.dk"),
        ({"taxes": {"dk": [{"name": "VAT", "rate": 2, "type": "vat"}]}}, "taxes.dk[0].rate"),
    ],
)
def test_invalid_fields_are_refused_by_name(api, overrides, field) -> None:
    response = api.post("expenses", expense_body(**overrides))

    assert response.status_code == 400
    assert field in error_fields(response)


def test_a_truncated_body_is_refused(api) -> None:
    response = api.client.post(api.url("expenses"), '{"id": "coffee', content_type="application/json")

    assert response.status_code == 400
    assert error_fields(response) == {"body"}


def test_a_duplicate_id_is_refused(api) -> None:
    api.post("expenses", expense_body())

    response = api.post("expenses", expense_body())

    assert response.status_code == 400
    assert error_fields(response) == {"id"}


def test_an_expense_id_with_dots_addresses_the_expense(api) -> None:
    api.post("expenses", expense_body(id="coffee.beans"))

    assert api.get("expenses/coffee.beans").json()["id"] == "coffee.beans"


def test_put_replaces_and_resets_omitted_taxes(api) -> None:
    api.post("expenses", expense_body())

    body = api.put("expenses/coffee", {"name": "Coffee"}).json()

    assert (body["name"], body["taxes"]) == ("Coffee", None)


def test_patch_changes_only_the_given_fields(api) -> None:
    api.post("expenses", expense_body())

    body = api.patch("expenses/coffee", {"name": "Coffee"}).json()

    assert body["taxes"] == [VAT]


def test_the_id_of_an_expense_cannot_change(api) -> None:
    api.post("expenses", expense_body())

    response = api.put("expenses/coffee", expense_body(id="tea"))

    assert error_fields(response) == {"id"}
    assert Expense.objects.get().expense_id == "coffee"


def test_delete_removes_the_expense(api) -> None:
    api.post("expenses", expense_body())

    assert api.delete("expenses/coffee").status_code == 204
    assert api.get("expenses/coffee").status_code == 404


def test_list_is_by_id_and_scoped_to_the_account(api, other_tenant) -> None:
    AdminApi(api.client, other_tenant).post("expenses", expense_body(id="other"))
    api.post("expenses", expense_body(id="tea"))
    api.post("expenses", expense_body(id="coffee"))

    assert [e["id"] for e in results(api.get("expenses"))] == ["coffee", "tea"]
    assert api.get("expenses/other").status_code == 404


def test_a_pos_key_reads_but_cannot_write_expenses(api, tenant) -> None:
    api.post("expenses", expense_body())
    pos = AdminApi(api.client, Tenant(**{**tenant.__dict__, "admin_key": tenant.pos_key}))

    assert pos.get("expenses/coffee").status_code == 200
    assert pos.post("expenses", expense_body(id="tea")).status_code == 403
    assert pos.delete("expenses/coffee").status_code == 403
