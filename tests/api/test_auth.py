from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts import services
from accounts.keys import prefix_of
from accounts.models import ApiKey
from core.api.credentials import INVALID_CREDENTIALS
from tests.factories import IntegrationFactory, api_key_for
from tests.support.tenants import Tenant

URL = "/api/v1/markets/"
REFUSED = {"status": "ERROR", "message": INVALID_CREDENTIALS}


def _revoked_key(tenant: Tenant) -> str:
    raw = api_key_for(tenant.integration, "admin")
    api_key = ApiKey.objects.get(prefix=prefix_of(raw))
    services.revoke_api_key(account=tenant.account, api_key=api_key)
    return raw


def _key_of_another_integration(tenant: Tenant) -> str:
    return api_key_for(IntegrationFactory(account=tenant.account, identifier="pos-app"), "admin")


CASES = {
    "wrong key": lambda t, o: t.params("rk_" + "0" * 40),
    "revoked key": lambda t, o: t.params(_revoked_key(t)),
    "key of another account": lambda t, o: t.params(o.admin_key),
    "key of another integration of the account": lambda t, o: t.params(_key_of_another_integration(t)),
    "missing key": lambda t, o: {"account": t.account.identifier, "integration": t.integration.identifier},
}


@pytest.mark.parametrize("case", CASES)
def test_rejected_credentials_answer_401_with_one_identical_body(
    client: APIClient, tenant: Tenant, other_tenant: Tenant, case: str
) -> None:
    response = client.get(URL, CASES[case](tenant, other_tenant))

    assert response.status_code == 401
    assert response.json() == REFUSED


def test_a_key_without_the_admin_scope_is_403(client: APIClient, tenant: Tenant) -> None:
    response = client.get(URL, tenant.params(tenant.imports_key))

    assert response.status_code == 403
    assert response.json() == {"status": "ERROR", "message": "This API key lacks the 'admin' scope."}


def test_a_pos_key_is_403(client: APIClient, tenant: Tenant) -> None:
    assert client.get(URL, tenant.params(tenant.pos_key)).status_code == 403


def test_bearer_header_authenticates(client: APIClient, tenant: Tenant) -> None:
    query = {"account": tenant.account.identifier, "integration": tenant.integration.identifier}

    response = client.get(URL, query, HTTP_AUTHORIZATION=f"Bearer {tenant.admin_key}")

    assert response.status_code == 200


def test_a_wrong_bearer_key_is_401(client: APIClient, tenant: Tenant) -> None:
    query = {"account": tenant.account.identifier, "integration": tenant.integration.identifier}

    response = client.get(URL, query, HTTP_AUTHORIZATION=f"Bearer {tenant.imports_key}x")

    assert response.status_code == 401
    assert response.json() == REFUSED


def test_legacy_accountkey_parameter_is_ignored(client: APIClient, tenant: Tenant) -> None:
    response = client.get(URL, tenant.params(tenant.admin_key, accountkey="anything"))

    assert response.status_code == 200


def test_last_used_at_is_recorded(client: APIClient, tenant: Tenant) -> None:
    client.get(URL, tenant.params(tenant.admin_key))

    api_key = ApiKey.objects.get(prefix=prefix_of(tenant.admin_key))
    assert api_key.last_used_at is not None


def test_a_url_without_the_trailing_slash_is_served(client: APIClient, tenant: Tenant) -> None:
    assert client.get("/api/v1/markets", tenant.params(tenant.admin_key)).status_code == 200
