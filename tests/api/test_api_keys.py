from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from tests.factories import IntegrationFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

LISTED_FIELDS = {
    "id",
    "prefix",
    "name",
    "scopes",
    "integration",
    "created_at",
    "last_used_at",
    "revoked_at",
    "active",
}


def _create(api: AdminApi, *scopes: str) -> dict:
    response = api.post("api-keys", {"integration": "webshop", "scopes": list(scopes), "name": "sync"})
    assert response.status_code == 201, response.json()
    return response.json()


def test_create_shows_the_key_once(api: AdminApi) -> None:
    created = _create(api, "imports")

    assert set(created) == LISTED_FIELDS | {"key"}
    assert created["key"].startswith("rk_" + created["prefix"])
    assert created["scopes"] == ["imports"]
    assert created["integration"] == "webshop"
    assert created["active"] is True


def test_list_never_shows_the_key_or_its_hash(api: AdminApi) -> None:
    created = _create(api, "imports")

    response = api.get("api-keys")

    assert all(set(row) == LISTED_FIELDS for row in results(response))
    assert created["key"] not in response.content.decode()
    assert ApiKey.objects.get(pk=created["id"]).key_hash not in response.content.decode()


def test_retrieve_never_shows_the_key(api: AdminApi) -> None:
    created = _create(api, "imports")

    assert set(api.get(f"api-keys/{created['id']}").json()) == LISTED_FIELDS


def test_a_new_admin_key_works_for_the_admin_api(api: AdminApi, client: APIClient, tenant: Tenant) -> None:
    created = _create(api, "admin")

    assert client.get("/api/v1/markets/", tenant.params(created["key"])).status_code == 200


def test_a_new_key_without_the_admin_scope_is_refused_by_the_admin_api(
    api: AdminApi, client: APIClient, tenant: Tenant
) -> None:
    created = _create(api, "imports")

    assert client.get("/api/v1/markets/", tenant.params(created["key"])).status_code == 403


def test_a_revoked_key_gets_401(api: AdminApi, client: APIClient, tenant: Tenant) -> None:
    created = _create(api, "admin")

    response = api.post(f"api-keys/{created['id']}/revoke")

    assert response.status_code == 200
    assert response.json()["active"] is False
    assert response.json()["revoked_at"] is not None
    assert client.get("/api/v1/markets/", tenant.params(created["key"])).status_code == 401


def test_revoking_twice_keeps_the_first_revocation_time(api: AdminApi) -> None:
    created = _create(api, "imports")
    first = api.post(f"api-keys/{created['id']}/revoke").json()["revoked_at"]

    assert api.post(f"api-keys/{created['id']}/revoke").json()["revoked_at"] == first


def test_create_for_a_key_of_another_integration_of_the_account(api: AdminApi) -> None:
    IntegrationFactory(account=api.tenant.account, identifier="erp")

    response = api.post("api-keys", {"integration": "erp", "scopes": ["imports"]})

    assert response.status_code == 201
    assert response.json()["integration"] == "erp"


def test_create_treats_an_integration_of_another_account_as_unknown(api: AdminApi, other_tenant: Tenant) -> None:
    IntegrationFactory(account=other_tenant.account, identifier="erp")

    response = api.post("api-keys", {"integration": "erp", "scopes": ["imports"]})

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "integration", "message": "Unknown integration 'erp'.", "code": "unknown"}
    ]


@pytest.mark.parametrize("scopes", [[], ["superuser"], "admin"])
def test_create_rejects_scopes_that_are_not_a_non_empty_subset(api: AdminApi, scopes: object) -> None:
    response = api.post("api-keys", {"integration": "webshop", "scopes": scopes})

    assert response.status_code == 400
    assert {re.split(r"[.\[]", f)[0] for f in error_fields(response)} == {"scopes"}


def test_list_shows_only_the_keys_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    listed = {row["id"] for row in results(api.get("api-keys"))}

    assert listed == set(ApiKey.objects.filter(account=api.tenant.account).values_list("id", flat=True))


@pytest.mark.parametrize("action", ["retrieve", "revoke"])
def test_a_key_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, action: str) -> None:
    other = ApiKey.objects.filter(account=other_tenant.account).first()

    response = api.get(f"api-keys/{other.pk}") if action == "retrieve" else api.post(f"api-keys/{other.pk}/revoke")

    assert response.status_code == 404
    other.refresh_from_db()
    assert other.revoked_at is None


@pytest.mark.parametrize("key_id", ["abc", "99999999999999999999999"])
def test_an_id_that_is_not_a_key_id_is_404(api: AdminApi, key_id: str) -> None:
    assert api.get(f"api-keys/{key_id}").status_code == 404
