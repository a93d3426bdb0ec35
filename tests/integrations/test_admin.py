"""The admin of runtime integrations: masked secrets, service checks, the test tool; the call log view-only."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client
from django.urls import reverse

from integrations.models import IntegrationCall, RuntimeIntegration
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

SECRET = "Bearer admin-s3cret-value"


def _url(view: str, *args: object) -> str:
    return reverse(f"admin:integrations_runtimeintegration_{view}", args=args)


def _form(tenant: Tenant, **change: Any) -> dict[str, Any]:
    return {
        "account": tenant.account.pk,
        "kind": "giftcard_read",
        "enabled": "on",
        "method": "GET",
        "url": "https://erp.example.com/giftcards/{code}",
        "query": "{}",
        "headers": json.dumps({"Authorization": SECRET}),
        "body": "null",
        "timeout": "5",
        "transform": "",
        **change,
    }


def test_an_integration_is_added_through_the_service_checks(admin_client: Client, tenant: Tenant) -> None:
    response = admin_client.post(_url("add"), _form(tenant))

    assert response.status_code == 302
    assert RuntimeIntegration.objects.get().headers == {"Authorization": SECRET}


def test_an_unknown_placeholder_is_an_error_on_its_field(admin_client: Client, tenant: Tenant) -> None:
    response = admin_client.post(_url("add"), _form(tenant, url="https://erp.example.com/{barcode}"))

    assert response.status_code == 200
    assert "unknown placeholder {barcode}" in str(response.context["adminform"].form.errors["url"])
    assert not RuntimeIntegration.objects.exists()


def test_the_change_form_masks_secrets_and_keeps_them_when_saved_back(admin_client: Client, tenant: Tenant) -> None:
    admin_client.post(_url("add"), _form(tenant))
    integration = RuntimeIntegration.objects.get()

    page = admin_client.get(_url("change", integration.pk)).content.decode()
    assert "admin-s3cret-value" not in page
    assert "********" in page

    data = _form(tenant, headers='{"Authorization": "********"}', timeout="9")
    del data["account"]
    assert admin_client.post(_url("change", integration.pk), data).status_code == 302
    integration.refresh_from_db()
    assert (integration.headers, str(integration.timeout)) == ({"Authorization": SECRET}, "9.0")


def test_a_second_integration_of_a_kind_is_an_error_on_kind(admin_client: Client, tenant: Tenant) -> None:
    admin_client.post(_url("add"), _form(tenant))

    response = admin_client.post(_url("add"), _form(tenant))

    assert response.status_code == 200
    assert "kind" in response.context["adminform"].form.errors
    assert RuntimeIntegration.objects.count() == 1


def test_the_test_tool_shows_the_answer_field_by_field(
    admin_client: Client, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.add_card("TEST-CARD", amount=50)
    reference.script["*"] = [(200, {"code": "TEST-CARD", "amount": 50})]
    integration = configure("giftcard_read")

    change_page = admin_client.get(_url("change", integration.pk)).content.decode()
    assert _url("test", integration.pk) in change_page
    page = admin_client.get(_url("test", integration.pk)).content.decode()

    assert "Not OK" in page
    assert "<code>currency_code</code>" in page
    assert IntegrationCall.objects.count() == 1


def test_the_test_tool_takes_typed_sample_values(
    admin_client: Client, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.add_card("GC-5", amount=25)
    integration = configure("giftcard_read")

    page = admin_client.post(_url("test", integration.pk), {"values": '{"code": "GC-5"}'}).content.decode()

    assert "OK: the answer matches the spec" in page
    assert reference.last().path == "/giftcards/GC-5"


def test_the_call_log_is_view_only(admin_client: Client, tenant: Tenant) -> None:
    logged = IntegrationCall.objects.create(account=tenant.account, kind="giftcard_pay", ok=False, duration_ms=3)

    assert admin_client.get(reverse("admin:integrations_integrationcall_changelist")).status_code == 200
    assert (
        admin_client.get(reverse("admin:integrations_integrationcall_changelist") + "?ok__exact=0").status_code == 200
    )
    assert admin_client.get(reverse("admin:integrations_integrationcall_add")).status_code == 403
    change = admin_client.post(reverse("admin:integrations_integrationcall_change", args=[logged.pk]), {"error": "x"})
    assert change.status_code == 403


def test_query_and_headers_are_rows_of_the_json_the_api_takes_with_secrets_masked(
    admin_client: Client, tenant: Tenant
) -> None:
    query = {"q": "{search_term}", "k": "api-key-value"}
    data = _form(tenant, kind="customer_lookup", url="https://erp.example.com/customers", query=json.dumps(query))
    data["secret_fields"] = '["query.k"]'
    assert admin_client.post(_url("add"), data).status_code == 302
    integration = RuntimeIntegration.objects.get()
    assert integration.query == query and integration.headers == {"Authorization": SECRET}

    form = admin_client.get(_url("change", integration.pk)).context["adminform"].form
    assert json.loads(form["headers"].value()) == {"Authorization": "********"}
    assert json.loads(form["query"].value()) == {"q": "{search_term}", "k": "********"}
    page = str(form["headers"])
    assert 'class="rows-value"' in page and 'class="rows-editor"' in page and "admin-s3cret" not in page


def test_the_add_form_lists_each_kinds_placeholders(admin_client: Client) -> None:
    page = admin_client.get(_url("add")).content.decode()
    script = page.split('<script id="kind-placeholders" type="application/json">')[1].split("</script>")[0]
    assert json.loads(script)["giftcard_pay"][:3] == ["{code}", "{id}", "{amount}"]
