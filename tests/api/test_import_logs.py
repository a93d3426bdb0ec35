from __future__ import annotations

import uuid

import pytest

from imports.models import ImportKind, ImportStatus
from tests.factories import ImportItemFactory, IntegrationFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant


def _item(tenant: Tenant, identifier: str, **fields: object) -> object:
    fields.setdefault("integration", tenant.integration)
    return ImportItemFactory(account=tenant.account, identifier=identifier, **fields)


def _identifiers(api: AdminApi, **params: str) -> list[str]:
    return [row["identifier"] for row in results(api.get("import-logs", **params))]


def test_list_is_newest_first(api: AdminApi) -> None:
    for n in range(3):
        _item(api.tenant, f"o-{n}")

    assert _identifiers(api) == ["o-2", "o-1", "o-0"]


def test_list_shows_only_the_log_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    _item(api.tenant, "mine")
    _item(other_tenant, "theirs")

    assert _identifiers(api) == ["mine"]


def test_an_entry_of_another_account_is_404(api: AdminApi, other_tenant: Tenant) -> None:
    theirs = _item(other_tenant, "theirs")

    assert api.get(f"import-logs/{theirs.pk}").status_code == 404


def test_the_integration_parameter_selects_that_integrations_log(api: AdminApi) -> None:
    _item(api.tenant, "via-webshop")
    _item(api.tenant, "via-erp", integration=IntegrationFactory(account=api.tenant.account, identifier="erp"))

    assert _identifiers(api) == ["via-webshop"]


def test_a_star_lists_every_integration_of_the_account(api: AdminApi) -> None:
    _item(api.tenant, "via-webshop")
    _item(api.tenant, "via-erp", integration=IntegrationFactory(account=api.tenant.account, identifier="erp"))

    assert set(_identifiers(api, integration_identifier="*")) == {"via-webshop", "via-erp"}


def test_filter_by_integration_identifier(api: AdminApi) -> None:
    _item(api.tenant, "via-webshop")
    _item(api.tenant, "via-erp", integration=IntegrationFactory(account=api.tenant.account, identifier="erp"))

    assert _identifiers(api, integration_identifier="erp") == ["via-erp"]


def test_filter_by_status(api: AdminApi) -> None:
    _item(api.tenant, "ok", status=ImportStatus.SUCCESS)
    _item(api.tenant, "bad", status=ImportStatus.REJECTED)

    assert _identifiers(api, status="rejected") == ["bad"]


def test_filter_by_kind(api: AdminApi) -> None:
    _item(api.tenant, "WEB-1", kind=ImportKind.INCOMING_ORDER)
    _item(api.tenant, "tag-10", kind=ImportKind.DISCOUNT_CAMPAIGN)

    assert _identifiers(api, kind="discount_campaign") == ["tag-10"]


def test_filter_by_identifier(api: AdminApi) -> None:
    _item(api.tenant, "WEB-1")
    _item(api.tenant, "WEB-2")

    assert _identifiers(api, identifier="WEB-2") == ["WEB-2"]


def test_filter_by_request_id(api: AdminApi) -> None:
    request_id = uuid.uuid4()
    _item(api.tenant, "in-request", request_id=request_id)
    _item(api.tenant, "elsewhere")

    assert _identifiers(api, request_id=str(request_id)) == ["in-request"]


@pytest.mark.parametrize(("name", "value"), [("status", "lost"), ("kind", "sale"), ("request_id", "not-a-uuid")])
def test_an_invalid_filter_value_is_400(api: AdminApi, name: str, value: str) -> None:
    response = api.get("import-logs", **{name: value})

    assert response.status_code == 400
    assert error_fields(response) == {name}


def test_list_is_paginated(api: AdminApi) -> None:
    for n in range(3):
        _item(api.tenant, f"o-{n}")

    body = api.get("import-logs", limit="1", offset="1").json()

    assert body["count"] == 3
    assert [row["identifier"] for row in body["results"]] == ["o-1"]


def test_an_entry_has_its_payload_and_outcome(api: AdminApi) -> None:
    request_id = uuid.uuid4()
    item = _item(
        api.tenant,
        "WEB-1",
        request_id=request_id,
        index=3,
        stock_location=api.tenant.stock_location,
        status=ImportStatus.REJECTED,
        message="basket.currency: required",
        errors=[{"field": "basket.currency", "message": "required", "code": "required"}],
        payload={"order_identifier": "WEB-1"},
    )

    body = api.get(f"import-logs/{item.pk}").json()

    assert body == {
        "id": item.pk,
        "integration": "webshop",
        "kind": "incoming_order",
        "request_id": str(request_id),
        "index": 3,
        "identifier": "WEB-1",
        "stock_location": "shop-1",
        "markets": [],
        "status": "rejected",
        "message": "basket.currency: required",
        "errors": [{"field": "basket.currency", "message": "required", "code": "required"}],
        "attempts": 0,
        "payload": {"order_identifier": "WEB-1"},
        "created_at": body["created_at"],
        "processed_at": None,
    }
