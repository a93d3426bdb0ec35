"""Import authentication: account, integration and apikey query parameters (or a Bearer header)."""

from __future__ import annotations

import json

import pytest

from accounts import services as account_services
from core.api.credentials import INVALID_CREDENTIALS
from tests.factories import IntegrationFactory, api_key_for
from tests.support.imports import order

pytestmark = pytest.mark.django_db

BODY = json.dumps({"orders": [order()]})


def call(client, query: str, **headers: str):
    return client.generic(
        "POST",
        f"/imports/incoming_orders?stock_location=shop-1&{query}",
        BODY,
        content_type="application/json",
        **headers,
    )


def test_the_three_query_parameters_authenticate(tenant, client):
    assert call(client, tenant.query()).status_code == 200


def test_the_legacy_accountkey_parameter_is_accepted_and_ignored(tenant, client):
    assert call(client, tenant.query(accountkey="whatever")).status_code == 200


def test_a_bearer_header_with_account_and_integration_in_the_query_authenticates(tenant, client):
    query = f"account={tenant.account.identifier}&integration={tenant.integration.identifier}"
    assert call(client, query, HTTP_AUTHORIZATION=f"Bearer {tenant.imports_key}").status_code == 200


def unauthorized(response) -> bool:
    return response.status_code == 401 and response.json() == {"status": "ERROR", "message": INVALID_CREDENTIALS}


def test_every_wrong_credential_answers_the_same_401(tenant, other_tenant, client):
    other_integration = IntegrationFactory(account=tenant.account, identifier="erp")
    key_of_other_integration = api_key_for(other_integration, "imports")
    cases = [
        tenant.query(key="rk_wrongwrongwrongwrongwrongwrongwrongwrong"),
        tenant.query(key="short"),
        tenant.query(key=other_tenant.imports_key),
        tenant.query(key=key_of_other_integration),
        other_tenant.query(key=tenant.imports_key),
        f"account={tenant.account.identifier}&integration=nope&apikey={tenant.imports_key}",
        f"account=nope&integration={tenant.integration.identifier}&apikey={tenant.imports_key}",
        f"integration={tenant.integration.identifier}&apikey={tenant.imports_key}",
    ]
    for query in cases:
        assert unauthorized(call(client, query)), query


def test_no_key_at_all_is_a_401(tenant, client):
    r = call(client, f"account={tenant.account.identifier}&integration={tenant.integration.identifier}")
    assert r.status_code == 401


def test_a_revoked_key_is_a_401(tenant, client):
    from accounts.models import ApiKey

    key = ApiKey.objects.get(prefix=tenant.imports_key[3:11])
    account_services.revoke_api_key(account=tenant.account, api_key=key)
    assert unauthorized(call(client, tenant.query()))


def test_a_key_without_the_imports_scope_is_a_403(tenant, client):
    r = call(client, tenant.query(key=tenant.admin_key))
    assert r.status_code == 403
    assert r.json()["message"] == "This API key lacks the 'imports' scope."


def test_only_a_hash_of_the_key_is_stored(tenant):
    from accounts.models import ApiKey

    stored = ApiKey.objects.get(prefix=tenant.imports_key[3:11])
    assert tenant.imports_key not in {stored.key_hash, stored.prefix, stored.name}
    assert len(stored.key_hash) == 64


def test_use_of_a_key_is_recorded(tenant, client):
    from accounts.models import ApiKey

    call(client, tenant.query())
    assert ApiKey.objects.get(prefix=tenant.imports_key[3:11]).last_used_at is not None
