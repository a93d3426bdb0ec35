"""``/api/v1/runtime-integrations/`` (CRUD, test action) and ``/api/v1/runtime-integration-calls/``."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from integrations.models import IntegrationCall, RuntimeIntegration
from tests.support.api import AdminApi, error_fields, results
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

BODY: dict[str, Any] = {
    "kind": "giftcard_pay",
    "method": "POST",
    "url": "https://erp.example.com/giftcards/{code}/pay",
    "query": {"shop": "{shop_id}"},
    "headers": {"Accept": "application/json"},
    "body": {"amount": "{amount}", "ref": "sale {sale_id}"},
    "timeout": "4.5",
    "transform": "data",
}


def test_create_answers_the_stored_configuration(api: AdminApi) -> None:
    response = api.post("runtime-integrations", BODY)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert {k: body[k] for k in BODY} == BODY
    assert body["enabled"] is True
    assert "amount" in body["placeholders"]
    assert RuntimeIntegration.objects.get().url == BODY["url"]


def test_defaults_fill_in_what_is_left_out(api: AdminApi) -> None:
    response = api.post("runtime-integrations", {"kind": "product_search", "url": "https://x.example.com/s"})

    body = response.json()
    assert (body["method"], body["query"], body["headers"], body["body"]) == ("GET", {}, {}, None)
    assert (body["timeout"], body["transform"], body["enabled"]) == ("5.0", "", True)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"url": "https://x.example.com/{nope}"}, "url"),
        ({"query": {"q": "{search_term}"}}, "query.q"),
        ({"headers": {"X-Key": "{password}"}}, "headers.X-Key"),
        ({"body": {"deep": [{"x": "{code} {oops}"}]}}, "body.deep[0].x"),
        ({"url": "https://{shop_id}.example.com/pay"}, "url"),
        ({"url": "ftp://x.example.com/pay"}, "url"),
        ({"url": "https://user:pw@x.example.com/pay"}, "url"),
        ({"url": "https://x.example.com/{code"}, "url"),
        ({"transform": "items[?"}, "transform"),
        ({"timeout": 31}, "timeout"),
        ({"timeout": 0}, "timeout"),
        ({"method": "GET"}, "body"),
        ({"method": "PUT"}, "method"),
        ({"kind": "teleport"}, "kind"),
        ({"headers": {"Bad Name": "x"}}, "headers.Bad Name"),
        ({"headers": {"Host": "evil.example.com"}}, "headers.Host"),
        ({"headers": {"X-A": "a\r\nX-B: b"}}, "headers.X-A"),
        ({"query": ["a"]}, "query"),
        ({"headers": {"X-A": ["x"]}}, "headers.X-A"),
        ({"url": None}, "url"),
    ],
)
def test_an_unusable_configuration_is_refused_naming_the_field(
    api: AdminApi, change: dict[str, Any], field: str
) -> None:
    response = api.post("runtime-integrations", {**BODY, **change})

    assert response.status_code == 400, response.json()
    assert field in error_fields(response)
    assert not RuntimeIntegration.objects.exists()


def test_a_second_configuration_of_a_kind_is_refused(api: AdminApi) -> None:
    api.post("runtime-integrations", BODY)

    response = api.post("runtime-integrations", BODY)

    assert response.status_code == 400
    assert error_fields(response) == {"kind"}


def test_truncated_json_is_a_400(api: AdminApi, client: APIClient) -> None:
    response = client.post(api.url("runtime-integrations"), '{"kind": "product_se', content_type="application/json")

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"


def test_unknown_fields_are_ignored_and_unicode_is_kept(api: AdminApi) -> None:
    response = api.post("runtime-integrations", {**BODY, "colour": "blå", "query": {"bemærk": "ø {shop_id} ✓"}})

    assert response.status_code == 201
    assert response.json()["query"] == {"bemærk": "ø {shop_id} ✓"}


def test_patch_changes_only_the_fields_given(api: AdminApi) -> None:
    pk = api.post("runtime-integrations", BODY).json()["id"]

    response = api.patch(f"runtime-integrations/{pk}", {"enabled": False, "timeout": 10})

    assert response.status_code == 200
    stored = RuntimeIntegration.objects.get()
    assert (stored.enabled, str(stored.timeout), stored.transform) == (False, "10.0", "data")


def test_put_resets_what_is_left_out(api: AdminApi) -> None:
    pk = api.post("runtime-integrations", BODY).json()["id"]

    response = api.put(f"runtime-integrations/{pk}", {"kind": "giftcard_pay", "url": BODY["url"], "method": "POST"})

    assert response.status_code == 200
    stored = RuntimeIntegration.objects.get()
    assert (stored.query, stored.body, stored.transform) == ({}, None, "")


def test_delete_keeps_the_call_log(api: AdminApi, tenant: Tenant) -> None:
    pk = api.post("runtime-integrations", BODY).json()["id"]
    IntegrationCall.objects.create(
        account=tenant.account, integration_id=pk, kind="giftcard_pay", ok=True, duration_ms=1
    )

    assert api.delete(f"runtime-integrations/{pk}").status_code == 204

    assert not RuntimeIntegration.objects.exists()
    assert IntegrationCall.objects.get().integration_id is None


def test_the_pos_key_cannot_configure(client: APIClient, tenant: Tenant) -> None:
    response = client.get(f"/api/v1/runtime-integrations/?{tenant.query(tenant.pos_key)}")

    assert response.status_code == 403


def test_a_non_numeric_id_is_a_404(api: AdminApi) -> None:
    assert api.get("runtime-integrations/abc").status_code == 404


# --- the test action ----------------------------------------------------------------------------------------


def test_the_test_action_reports_a_matching_answer(
    api: AdminApi, reference: ReferenceIntegrator, configure: Any
) -> None:
    integration = configure("shipping_options")

    response = api.post(f"runtime-integrations/{integration.pk}/test", {})

    body = response.json()
    assert response.status_code == 200, body
    assert (body["ok"], body["status_code"], body["problems"]) == (True, 200, [])
    assert body["data"][0]["id"] == "gls"
    assert reference.last().body["address"]["city"] == "København"  # the kind's sample values


def test_the_test_action_reports_each_bad_field(api: AdminApi, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["*"] = [(200, [{"id": "gls", "price": "cheap", "title": "GLS"}])]
    integration = configure("shipping_options")

    body = api.post(f"runtime-integrations/{integration.pk}/test", {}).json()

    assert body["ok"] is False
    fields = {p["field"] for p in body["problems"]}
    assert {"[0].price", "[0].subtitle"} <= fields


def test_the_test_action_uses_the_values_given(api: AdminApi, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.add_card("GC-77", amount=40)
    integration = configure("giftcard_read")

    body = api.post(f"runtime-integrations/{integration.pk}/test", {"values": {"code": "GC-77"}}).json()

    assert body["ok"] is True, body
    assert body["data"]["code"] == "GC-77"


def test_the_test_action_reports_a_failed_call(api: AdminApi, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["*"] = [(503, "down")]
    integration = configure("customer_lookup", enabled=False)  # a disabled integration can be tested

    body = api.post(f"runtime-integrations/{integration.pk}/test", {}).json()

    assert (body["ok"], body["status_code"], body["data"]) == (False, 503, None)
    assert body["problems"] == [{"field": "", "message": "the integrator answered HTTP 503"}]


def test_the_test_action_refuses_values_that_are_not_an_object(api: AdminApi, configure: Any) -> None:
    integration = configure("customer_lookup")

    response = api.post(f"runtime-integrations/{integration.pk}/test", {"values": ["x"]})

    assert response.status_code == 400
    assert error_fields(response) == {"values"}


# --- the call log -------------------------------------------------------------------------------------------


def test_the_call_log_is_filtered_by_kind_and_outcome(
    api: AdminApi, reference: ReferenceIntegrator, configure: Any
) -> None:
    for kind in ("product_search", "customer_lookup"):
        configure(kind)
        api.post(f"runtime-integrations/{RuntimeIntegration.objects.get(kind=kind).pk}/test", {})
    reference.script["*"] = [(500, "x")]
    api.post(f"runtime-integrations/{RuntimeIntegration.objects.get(kind='product_search').pk}/test", {})

    assert len(results(api.get("runtime-integration-calls"))) == 3
    failed = results(api.get("runtime-integration-calls", kind="product_search", ok="false"))
    assert [(c["kind"], c["ok"], c["status_code"]) for c in failed] == [("product_search", False, 500)]
    assert {c["kind"] for c in results(api.get("runtime-integration-calls", ok="true"))} == {
        "product_search",
        "customer_lookup",
    }


def test_a_bad_call_log_filter_is_a_400(api: AdminApi) -> None:
    assert error_fields(api.get("runtime-integration-calls", kind="nope")) == {"kind"}
