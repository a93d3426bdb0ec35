from __future__ import annotations

import pytest

from accounts.models import ApiKey, Integration
from tests.factories import IntegrationFactory, api_key_for
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant


def test_create_answers_201_with_the_integration(api: AdminApi) -> None:
    response = api.post("integrations", {"identifier": "erp", "name": "ERP"})

    assert response.status_code == 201
    assert response.json() == {"identifier": "erp", "name": "ERP", "created_at": response.json()["created_at"]}


def test_create_rejects_a_duplicate_identifier(api: AdminApi) -> None:
    response = api.post("integrations", {"identifier": "webshop"})

    assert response.status_code == 400
    assert error_fields(response) == {"identifier"}


def test_list_shows_only_the_integrations_of_the_account(api: AdminApi, other_tenant: Tenant) -> None:
    IntegrationFactory(account=other_tenant.account, identifier="erp")

    assert [i["identifier"] for i in results(api.get("integrations"))] == ["webshop"]


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_an_integration_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, method: str) -> None:
    IntegrationFactory(account=other_tenant.account, identifier="erp")
    response = api.call(method, "integrations/erp", {"name": "x"})

    assert response.status_code == 404
    assert Integration.objects.filter(account=other_tenant.account, identifier="erp", name="").exists()


def test_deleting_the_integration_of_the_calling_key_is_409(api: AdminApi) -> None:
    response = api.delete("integrations/webshop")

    assert response.status_code == 409
    assert Integration.objects.filter(account=api.tenant.account, identifier="webshop").exists()


def test_deleting_another_integration_deletes_its_keys(api: AdminApi) -> None:
    erp = IntegrationFactory(account=api.tenant.account, identifier="erp")
    api_key_for(erp, "imports")

    response = api.delete("integrations/erp")

    assert response.status_code == 204
    assert not ApiKey.objects.filter(integration_id=erp.pk).exists()
