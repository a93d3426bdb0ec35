"""Every refused request under ``/imports/`` and ``/api/`` is the documented JSON 4xx naming the field, never an
HTML 500 or HTML 400: destination URLs Python cannot take apart, ports out of range, URLs and
headers over their bounds, look-alike ``@`` and ``\\`` in names and paths, a query of more than
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` fields; and Django's own 400 and 500 under those prefixes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.exceptions import SuspiciousOperation
from django.test import Client
from django.urls import reverse

from exports.models import ExportQueue
from integrations.models import RuntimeIntegration
from tests.support.queues import admin_queue_form
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

SECRET = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="
# URLs ``urllib.parse`` raises ValueError for (in urlsplit, or reading .hostname / .port), and ports it accepts
# that no destination has.
BAD_URLS = [
    "http://[x]/",  # a bracketed host that is not an IPv6 address
    "https://[::1/",  # an unclosed bracket
    "https://a\u2100b/",  # a host that NFKC normalisation changes (U+2100 ACCOUNT OF)
    "https://erp.example.com:99999/hook",
    "https://erp.example.com:abc/hook",
    "https://erp.example.com:0/hook",
    "https://erp.example.com/" + "a" * 2048,  # over MAX_URL_LENGTH
]


def queue_body(**delivery: Any) -> dict[str, Any]:
    return {
        "name": "orders to erp",
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "identity"},
        "delivery": {"type": "webhook", "url": "https://erp.example.com/hook", "secret": SECRET, **delivery},
    }


def email(**config: Any) -> dict[str, Any]:
    return queue_body() | {"delivery": {"type": "email", "recipients": ["ops@example.com"], **config}}


def ftp(kind: str, path: str) -> dict[str, Any]:
    config: dict[str, Any] = {"type": kind, "host": "ftp.example.com", "username": "u", "password": "p", "path": path}
    if kind == "sftp":
        config["insecure_accept_any_host_key"] = True
    return queue_body() | {"delivery": config}


def integration(**change: Any) -> dict[str, Any]:
    return {"kind": "product_search", "url": "https://erp.example.com/search", **change}


MANY_FIELDS = "&".join(f"f{i}=1" for i in range(1001))

# (what, method, path under the tenant's credentials, body, the field the 400 names)
CASES: list[tuple[str, str, str, Any, str]] = [
    *[(f"queue url {u[:40]}", "post", "/api/v1/export-queues/", queue_body(url=u), "delivery.url") for u in BAD_URLS],
    *[
        (f"integration url {u[:40]}", "post", "/api/v1/runtime-integrations/", integration(url=u), "url")
        for u in BAD_URLS
    ],
    (
        "queue: 51 headers",
        "post",
        "/api/v1/export-queues/",
        queue_body(headers={f"X-{i}": "v" for i in range(51)}),
        "delivery.headers",
    ),
    (
        "queue: a 257-character header name",
        "post",
        "/api/v1/export-queues/",
        queue_body(headers={"X-" + "n" * 255: "v"}),
        "delivery.headers." + ("X-" + "n" * 255)[:64],
    ),
    (
        "queue: a 4,097-character header value",
        "post",
        "/api/v1/export-queues/",
        queue_body(headers={"X-Shop": "v" * 4097}),
        "delivery.headers.X-Shop",
    ),
    (
        "integration: 51 headers",
        "post",
        "/api/v1/runtime-integrations/",
        integration(headers={f"X-{i}": "v" for i in range(51)}),
        "headers",
    ),
    (
        "from-name with a full-width @",
        "post",
        "/api/v1/export-queues/",
        email(from_name="Acme\uff20shop"),
        "delivery.from_name",
    ),
    (
        "from-name with a small @",
        "post",
        "/api/v1/export-queues/",
        email(from_name="Acme\ufe6bshop"),
        "delivery.from_name",
    ),
    (
        "from-name with a backslash",
        "post",
        "/api/v1/export-queues/",
        email(from_name="Acme\\shop"),
        "delivery.from_name",
    ),
    (
        "attachment name ..\\",
        "post",
        "/api/v1/export-queues/",
        email(attachment_name="..\\{delivery_id}.{ext}"),
        "delivery.attachment_name",
    ),
    (
        "attachment name with a full-width backslash",
        "post",
        "/api/v1/export-queues/",
        email(attachment_name="x\uff3c{delivery_id}.{ext}"),
        "delivery.attachment_name",
    ),
    (
        "attachment name with a full-width @",
        "post",
        "/api/v1/export-queues/",
        email(attachment_name="x\uff20{delivery_id}.{ext}"),
        "delivery.attachment_name",
    ),
    (
        "ftp path ..\\",
        "post",
        "/api/v1/export-queues/",
        ftp("ftp", "exports/..\\..\\{delivery_id}.{ext}"),
        "delivery.path",
    ),
    (
        "ftp path with a set-minus",
        "post",
        "/api/v1/export-queues/",
        ftp("ftp", "exports\u2216{delivery_id}.{ext}"),
        "delivery.path",
    ),
    (
        "sftp path with a small backslash",
        "post",
        "/api/v1/export-queues/",
        ftp("sftp", "exports\ufe68{delivery_id}.{ext}"),
        "delivery.path",
    ),
    (
        "sftp path with a full-width @",
        "post",
        "/api/v1/export-queues/",
        ftp("sftp", "x\uff20{delivery_id}.{ext}"),
        "delivery.path",
    ),
    (
        "product image_url http://[x]/",
        "post",
        "/api/v1/products/",
        {"id": "p-1", "name": "P", "image_url": "http://[x]/"},
        "image_url",
    ),
    ("1,001 query fields on the API", "get", "/api/v1/markets/?" + MANY_FIELDS, None, "query"),
    ("1,001 query fields on an import", "post", "/imports/incoming_orders?" + MANY_FIELDS, [], "query"),
]


def call(tenant: Tenant, method: str, path: str, body: Any) -> Any:
    key = tenant.imports_key if path.startswith("/imports/") else tenant.admin_key
    joined = f"{path}{'&' if '?' in path else '?'}{tenant.query(key)}"
    client = Client(raise_request_exception=False)
    if body is None:
        return getattr(client, method)(joined)
    return getattr(client, method)(joined, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(("method", "path", "body", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_refusal_is_a_json_400_naming_the_field(tenant: Tenant, method, path, body, field) -> None:
    response = call(tenant, method, path, body)

    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    answer = response.json()
    assert answer["status"] == "ERROR"
    assert field in {error["field"] for error in answer["errors"]}, answer
    assert not ExportQueue.objects.exists()
    assert not RuntimeIntegration.objects.exists()


# --- Through the API, one case at a time --------------------------------------------------------------------------
def test_a_web_hook_url_of_a_bracketed_host_that_is_no_address_is_a_400_not_a_500(tenant: Tenant) -> None:
    response = call(tenant, "post", "/api/v1/export-queues/", queue_body(url="http://[x]/"))

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "delivery.url"


def test_a_runtime_integration_url_of_a_bracketed_host_that_is_no_address_is_a_400_not_a_500(tenant) -> None:
    response = call(tenant, "post", "/api/v1/runtime-integrations/", integration(url="http://[x]/"))

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "url"


def test_a_web_hook_url_of_60_kb_is_refused(tenant: Tenant) -> None:
    response = call(tenant, "post", "/api/v1/export-queues/", queue_body(url="https://erp.example.com/" + "a" * 60_000))

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "delivery.url"
    assert "at most 2048 characters" in error["message"]


def test_a_request_of_more_than_1000_fields_is_a_json_400(tenant: Tenant) -> None:
    response = call(tenant, "get", "/api/v1/markets/?" + MANY_FIELDS, None)

    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "query",
        "message": "The query string holds more than 1000 parameters",
        "code": "too_many_fields",
    }


def test_a_web_hook_url_with_a_port_out_of_range_is_no_longer_saved(tenant: Tenant) -> None:
    for url in ("https://erp.example.com:99999/hook", "https://erp.example.com:abc/hook"):
        assert call(tenant, "post", "/api/v1/export-queues/", queue_body(url=url)).status_code == 400
    assert not ExportQueue.objects.exists()


def test_a_patch_to_a_bad_url_is_refused_and_the_queue_kept(tenant: Tenant) -> None:
    created = call(tenant, "post", "/api/v1/export-queues/", queue_body())
    assert created.status_code == 201, created.json()

    response = call(
        tenant,
        "patch",
        f"/api/v1/export-queues/{created.json()['id']}/",
        {"delivery": {"type": "webhook", "url": "http://[x]/"}},
    )

    assert response.status_code == 400
    assert ExportQueue.objects.get().delivery["url"] == "https://erp.example.com/hook"


# --- The admin forms: the same checks, on the field, never a 500 --------------------------------------------------


@pytest.mark.parametrize("url", BAD_URLS[:4])
def test_the_queue_admin_form_names_a_broken_url_on_its_field(admin_client: Client, tenant: Tenant, url) -> None:
    response = admin_client.post(
        reverse("admin:exports_exportqueue_add"), admin_queue_form(tenant, delivery__url=url, delivery__secret=SECRET)
    )

    assert response.status_code == 200
    assert "delivery__url" in response.context["adminform"].form.errors
    assert not ExportQueue.objects.exists()


@pytest.mark.parametrize("url", BAD_URLS[:4])
def test_the_integration_admin_form_names_a_broken_url_on_its_field(admin_client: Client, tenant, url) -> None:
    form = {
        "account": tenant.account.pk,
        "kind": "product_search",
        "enabled": "on",
        "method": "GET",
        "url": url,
        "query": "{}",
        "headers": "{}",
        "body": "null",
        "timeout": "5",
        "transform": "",
    }
    response = admin_client.post(reverse("admin:integrations_runtimeintegration_add"), form)

    assert response.status_code == 200
    assert "url" in response.context["adminform"].form.errors
    assert not RuntimeIntegration.objects.exists()


# --- Django's own 400 and 500 under the JSON prefixes -------------------------------------------------------------
def test_an_unexpected_error_under_the_api_is_a_json_500(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    from integrations import services

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(services, "save_runtime_integration", broken)

    response = call(tenant, "post", "/api/v1/runtime-integrations/", integration())

    assert response.status_code == 500
    assert response.json() == {"status": "ERROR", "message": "Internal error: the request could not be completed."}


def test_a_suspicious_operation_under_the_api_is_a_json_400(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    from integrations import services

    def suspicious(**kwargs: Any) -> None:
        raise SuspiciousOperation("something looked wrong")

    monkeypatch.setattr(services, "save_runtime_integration", suspicious)

    response = call(tenant, "post", "/api/v1/runtime-integrations/", integration())

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["status"] == "ERROR"


def test_outside_the_json_prefixes_django_keeps_its_pages(admin_client: Client) -> None:
    response = Client(raise_request_exception=False).get("/admin/login/?" + MANY_FIELDS)

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/")
