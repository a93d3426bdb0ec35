"""Previews and test sends are rate-limited per account and per API key (or staff user): past either limit, a
429 with Retry-After and a JSON body, for admin-scope keys too; the admin's try-outs count the same way."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.services import create_api_key
from exports.models import ExportQueue
from tests.support.admin import admin_url
from tests.support.api import AdminApi
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

CONFIG = {"entity_type": "incoming_order_state_changes", "transform": {"type": "identity"}}


@pytest.fixture
def limits(settings: Any) -> None:
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    settings.PREVIEW_RATE_LIMIT_PER_ACCOUNT = 3
    settings.PREVIEW_RATE_WINDOW_SECONDS = 60


def second_admin_key(tenant: Tenant) -> str:
    _, raw = create_api_key(account=tenant.account, integration=tenant.integration, scopes=["admin"])
    return raw


def post_as(client: APIClient, tenant: Tenant, key: str, path: str, body: Any) -> Any:
    return client.post(f"/api/v1/{path}/?{tenant.query(key)}", body, format="json")


@pytest.mark.usefixtures("limits")
def test_a_key_past_its_limit_gets_429_with_retry_after_and_a_json_body(client: APIClient, tenant: Tenant) -> None:
    import_orders(client, tenant, "WEB-1")
    api = AdminApi(client, tenant)
    assert [api.post("export-queues/preview", CONFIG).status_code for _ in range(2)] == [200, 200]

    refused = api.post("export-queues/preview", CONFIG)

    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["status"] == "ERROR" and "Retry-After" in refused.json()["message"]


@pytest.mark.usefixtures("limits")
def test_the_account_limit_holds_across_its_keys_and_spares_other_accounts(
    client: APIClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    import_orders(client, tenant, "WEB-1")
    queue = make_queue(tenant, "https://erp.example.com/hook")
    api = AdminApi(client, tenant)
    assert api.post("export-queues/preview", CONFIG).status_code == 200
    assert api.post(f"export-queues/{queue.pk}/preview", {}).status_code == 200
    other_key = second_admin_key(tenant)
    assert post_as(client, tenant, other_key, "export-queues/preview", CONFIG).status_code == 200

    refused = post_as(client, tenant, other_key, f"export-queues/{queue.pk}/preview", {})

    assert refused.status_code == 429 and refused.has_header("Retry-After")
    # Another account's keys count apart.
    assert AdminApi(client, other_tenant).post("export-queues/preview", CONFIG).status_code == 400  # nothing stored


@pytest.mark.usefixtures("limits")
def test_a_request_that_is_not_allowed_is_not_counted(client: APIClient, tenant: Tenant) -> None:
    for _ in range(3):
        response = post_as(client, tenant, tenant.imports_key, "export-queues/preview", CONFIG)
        assert response.status_code == 403

    assert AdminApi(client, tenant).post("export-queues/preview", CONFIG).status_code == 400  # nothing stored


@pytest.mark.usefixtures("limits")
def test_the_admins_live_preview_and_test_delivery_count_too(admin_client, client: APIClient, tenant: Tenant) -> None:
    import_orders(client, tenant, "WEB-1")
    queue = make_queue(tenant, "https://erp.example.com/hook")
    preview = admin_client.get(admin_url(ExportQueue, "preview", queue.pk))
    assert "preview-output" in preview.content.decode()
    assert admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).status_code == 200

    live = admin_client.post(admin_url(ExportQueue, "preview_live"), {"_queue": str(queue.pk)})
    page = admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).content.decode()
    sent = admin_client.post(admin_url(ExportQueue, "test_delivery", queue.pk), {}, follow=True).content.decode()

    assert live.status_code == 429 and live.has_header("Retry-After") and not live.json()["ok"]
    assert "Too many previews" in page and "preview-output" not in page
    assert "Test delivery not sent: Too many previews" in sent
