"""What one account may hold: export queues (EXPORT_QUEUES_PER_ACCOUNT) and integrations
(INTEGRATIONS_PER_ACCOUNT); one more is refused with a 409 naming the field, other accounts unaffected."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import Integration
from exports.models import ExportQueue
from tests.support.admin import admin_url
from tests.support.api import AdminApi
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def queue_body(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "identity"},
        "delivery": {"type": "webhook", "url": "https://erp.example.com/hook"},
    }


def refusal(response: Any) -> tuple[int, list[tuple[str, str]]]:
    return response.status_code, [(e["field"], e["code"]) for e in response.json().get("errors", [])]


def test_an_export_queue_past_the_accounts_limit_is_refused_naming_the_field(
    client: APIClient, tenant: Tenant, other_tenant: Tenant, settings: Any
) -> None:
    settings.EXPORT_QUEUES_PER_ACCOUNT = 2
    api = AdminApi(client, tenant)
    assert [api.post("export-queues", queue_body(f"q{n}")).status_code for n in range(2)] == [201, 201]

    refused = api.post("export-queues", queue_body("q2"))

    assert refusal(refused) == (409, [("name", "limit_reached")])
    assert "2 export queues" in refused.json()["message"]
    assert ExportQueue.objects.filter(account=tenant.account).count() == 2
    # Changing a queue is not adding one; another account has its own count.
    first = ExportQueue.objects.filter(account=tenant.account).first()
    assert first is not None
    assert api.patch(f"export-queues/{first.pk}", {"enabled": False}).status_code == 200
    assert AdminApi(client, other_tenant).post("export-queues", queue_body("q0")).status_code == 201


def test_a_deleted_queue_makes_room_again(client: APIClient, tenant: Tenant, settings: Any) -> None:
    settings.EXPORT_QUEUES_PER_ACCOUNT = 1
    api = AdminApi(client, tenant)
    created = api.post("export-queues", queue_body("q0")).json()
    assert api.post("export-queues", queue_body("q1")).status_code == 409

    assert api.delete(f"export-queues/{created['id']}").status_code == 204

    assert api.post("export-queues", queue_body("q1")).status_code == 201


def test_an_integration_past_the_accounts_limit_is_refused_naming_the_field(
    client: APIClient, tenant: Tenant, settings: Any
) -> None:
    settings.INTEGRATIONS_PER_ACCOUNT = 2  # the tenant has "webshop" already
    api = AdminApi(client, tenant)
    assert api.post("integrations", {"identifier": "erp"}).status_code == 201

    refused = api.post("integrations", {"identifier": "pos"})

    assert refusal(refused) == (409, [("identifier", "limit_reached")])
    assert list(
        Integration.objects.filter(account=tenant.account).values_list("identifier", flat=True).order_by("pk")
    ) == [
        "webshop",
        "erp",
    ]
    assert api.patch("integrations/erp", {"name": "ERP"}).status_code == 200


def test_a_limit_of_zero_is_no_limit(client: APIClient, tenant: Tenant, settings: Any) -> None:
    settings.EXPORT_QUEUES_PER_ACCOUNT = 0
    api = AdminApi(client, tenant)

    assert all(api.post("export-queues", queue_body(f"q{n}")).status_code == 201 for n in range(3))


def test_the_admins_add_form_says_the_limit_on_the_name(admin_client: Any, tenant: Tenant, settings: Any) -> None:
    settings.EXPORT_QUEUES_PER_ACCOUNT = 1
    AdminApi(APIClient(), tenant).post("export-queues", queue_body("q0"))
    form = {
        "account": str(tenant.account.pk),
        "name": "q1",
        "entity_type": "incoming_order_state_changes",
        "enabled": "on",
        "trigger": "realtime",
        "daily_at": "",
        "filters": "{}",
        "transform": '{"type": "identity"}',
        "delivery": '{"type": "webhook", "url": "https://erp.example.com/hook"}',
        "_save": "Save",
    }

    response = admin_client.post(admin_url(ExportQueue, "add"), form)

    assert response.status_code == 200  # the form again, not a redirect
    assert any("1 export queues" in error for error in response.context["adminform"].form.errors["name"])
    assert ExportQueue.objects.filter(account=tenant.account).count() == 1
