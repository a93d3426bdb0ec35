"""/metrics: request metrics by route and status, business metrics from the database, the optional token."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from accounts.auth_failures import TOO_MANY_FAILURES
from exports.models import ExportStatus
from imports.models import ImportKind, ImportStatus
from ops import metrics
from tests.factories import ImportItemFactory
from tests.support.logs import make_attempt, make_call, make_delivery, make_item, make_sales_queue

pytestmark = pytest.mark.django_db


@pytest.fixture
def web() -> Client:
    return Client()


def scrape(web: Client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of a scrape: ``{(name, sorted labels): value}``."""
    response = web.get("/metrics", **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


# --- Requests ---------------------------------------------------------------------------------------------------
def test_requests_are_counted_by_route_not_by_raw_path(web, tenant) -> None:
    web.get(f"/api/v1/sales/123456789?{tenant.query(tenant.admin_key)}")
    samples = scrape(web)
    labels = [dict(key[1]) for key in samples if key[0] == "http_requests_total"]
    assert not any("123456789" in label["endpoint"] for label in labels)
    assert {"endpoint": "/api/v1/sales/<pk>", "method": "GET", "status": "404"} in labels


def test_a_path_route_keeps_its_converter_name(web, admin_client) -> None:
    admin_client.get("/admin/accounts/account/424242/change/")
    endpoints = {dict(k[1])["endpoint"] for k in scrape(web) if k[0] == "http_requests_total"}
    assert "/admin/accounts/account/<path:object_id>/change/" in endpoints


def test_a_request_increments_the_counter_of_its_endpoint_and_status(web) -> None:
    key = {"endpoint": "/health/live", "method": "GET", "status": "200"}
    before = value(scrape(web), "http_requests_total", **key) or 0.0
    web.get("/health/live")
    web.get("/health/live")
    assert value(scrape(web), "http_requests_total", **key) == before + 2


def test_a_refused_method_is_counted_with_its_status(web) -> None:
    web.post("/health/live")
    assert value(scrape(web), "http_requests_total", endpoint="/health/live", method="POST", status="405")


def test_an_unknown_path_is_one_label_whatever_the_path(web) -> None:
    web.get("/no/such/page/1")
    web.get("/no/such/page/2")
    samples = scrape(web)
    endpoints = {dict(k[1])["endpoint"] for k in samples if k[0] == "http_requests_total"}
    assert "<unmatched>" in endpoints
    assert not any("such" in e for e in endpoints)


def test_an_invented_http_method_is_counted_as_other(web) -> None:
    web.generic("BREW", "/health/live")
    samples = scrape(web)
    methods = {dict(k[1])["method"] for k in samples if k[0] == "http_requests_total"}
    assert "BREW" not in methods
    assert "OTHER" in methods


def test_request_durations_are_observed_per_endpoint(web) -> None:
    web.get("/health/live")
    count = value(scrape(web), "http_request_duration_seconds_count", endpoint="/health/live", method="GET")
    assert count and count >= 1


# --- Business metrics from the database -------------------------------------------------------------------------
def test_the_export_backlog_and_its_oldest_age_per_queue(web, tenant) -> None:
    queue = make_sales_queue(tenant.account, "hooks")
    make_item(queue, age=timedelta(minutes=10))
    make_item(queue)
    make_item(queue, status=ExportStatus.SUCCESS, age=timedelta(hours=2))
    samples = scrape(web)
    assert value(samples, "retail_export_backlog", account="acme", queue="hooks") == 2
    age = value(samples, "retail_export_oldest_pending_age_seconds", account="acme", queue="hooks")
    assert 590 < age < 700


def test_an_empty_queue_reports_zero_backlog(web, tenant) -> None:
    make_sales_queue(tenant.account, "quiet")
    samples = scrape(web)
    assert value(samples, "retail_export_backlog", account="acme", queue="quiet") == 0
    assert value(samples, "retail_export_oldest_pending_age_seconds", account="acme", queue="quiet") == 0


def test_export_items_by_queue_and_status_in_the_window(web, tenant, settings) -> None:
    settings.METRICS_WINDOW_SECONDS = 900
    queue = make_sales_queue(tenant.account, "hooks")
    make_item(queue, status=ExportStatus.SUCCESS)
    make_item(queue, status=ExportStatus.SUCCESS)
    make_item(queue, status=ExportStatus.FAILURE)
    make_item(queue, status=ExportStatus.SUCCESS, age=timedelta(hours=1))  # outside the window
    samples = scrape(web)
    assert value(samples, "retail_export_items", account="acme", queue="hooks", status="success") == 2
    assert value(samples, "retail_export_items", account="acme", queue="hooks", status="failure") == 1


def test_import_items_queued_materialised_and_failed(web, tenant) -> None:
    for status in (ImportStatus.PENDING, ImportStatus.SUCCESS, ImportStatus.SUCCESS, ImportStatus.FAILURE):
        ImportItemFactory(account=tenant.account, integration=tenant.integration, status=status)
    samples = scrape(web)
    kind = ImportKind.INCOMING_ORDER.value
    assert value(samples, "retail_import_items", kind=kind, status="success") == 2
    assert value(samples, "retail_import_items", kind=kind, status="failure") == 1
    assert value(samples, "retail_import_items", kind=kind, status="pending") == 1
    assert value(samples, "retail_import_backlog") == 1


def test_the_delivery_latency_histogram(web, tenant) -> None:
    queue = make_sales_queue(tenant.account)
    delivery = make_delivery(queue)
    make_attempt(delivery, number=1, ok=False, duration_ms=3000)
    make_attempt(delivery, number=2, ok=True, duration_ms=40)
    make_attempt(make_delivery(queue), number=1, ok=True, duration_ms=700)
    samples = scrape(web)
    name = "retail_export_delivery_duration_seconds"
    assert value(samples, f"{name}_count", outcome="success") == 2
    assert value(samples, f"{name}_bucket", outcome="success", le="0.05") == 1
    assert value(samples, f"{name}_bucket", outcome="success", le="1.0") == 2
    assert value(samples, f"{name}_bucket", outcome="failure", le="2.5") == 0
    assert value(samples, f"{name}_bucket", outcome="failure", le="5.0") == 1
    assert value(samples, f"{name}_sum", outcome="success") == pytest.approx(0.74)


def test_retries_are_the_attempts_after_the_first(web, tenant) -> None:
    queue = make_sales_queue(tenant.account, "hooks")
    delivery = make_delivery(queue)
    make_attempt(delivery, number=1, ok=False)
    make_attempt(delivery, number=2, ok=False)
    make_attempt(delivery, number=3, ok=True)
    samples = scrape(web)
    assert value(samples, "retail_export_retries", account="acme", queue="hooks", outcome="failure") == 1
    assert value(samples, "retail_export_retries", account="acme", queue="hooks", outcome="success") == 1


def test_the_integration_call_latency_by_kind_and_outcome(web, tenant) -> None:
    make_call(tenant.account, kind="customer_lookup", ok=True, duration_ms=120)
    make_call(tenant.account, kind="customer_lookup", ok=False, duration_ms=10_000)
    samples = scrape(web)
    name = "retail_integration_call_duration_seconds"
    assert value(samples, f"{name}_count", kind="customer_lookup", outcome="success") == 1
    assert value(samples, f"{name}_bucket", kind="customer_lookup", outcome="success", le="0.25") == 1
    assert value(samples, f"{name}_bucket", kind="customer_lookup", outcome="failure", le="5.0") == 0
    assert value(samples, f"{name}_bucket", kind="customer_lookup", outcome="failure", le="+Inf") == 1


def test_the_business_metrics_cost_a_fixed_number_of_queries(web, tenant, django_assert_max_num_queries) -> None:
    for name in ("a", "b", "c"):
        queue = make_sales_queue(tenant.account, name)
        make_item(queue)
        make_attempt(make_delivery(queue))
    make_call(tenant.account)
    # 9, and 3 for what the breakers hold back: breakers by state, paused deliveries, disabled queues
    with django_assert_max_num_queries(12):
        metrics.render()


def test_a_database_error_during_a_scrape_reports_the_metrics_as_down(web, monkeypatch) -> None:
    from django.db import OperationalError

    def broken(**kwargs):
        raise OperationalError("server closed the connection")

    monkeypatch.setattr(metrics.selectors, "import_items_by_status", broken)
    samples = scrape(web)
    assert value(samples, "retail_metrics_database_up") == 0


def test_the_database_metrics_are_up_normally(web) -> None:
    assert value(scrape(web), "retail_metrics_database_up") == 1


# --- Access -----------------------------------------------------------------------------------------------------
def test_metrics_are_open_when_no_token_is_set(web, settings) -> None:
    settings.METRICS_TOKEN = ""
    assert web.get("/metrics").status_code == 200


def test_metrics_refuse_a_scrape_without_the_token(web, settings) -> None:
    settings.METRICS_TOKEN = "scrape-secret"
    response = web.get("/metrics")
    assert response.status_code == 401
    assert response.json()["status"] == "ERROR"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_metrics_refuse_a_wrong_token(web, settings) -> None:
    settings.METRICS_TOKEN = "scrape-secret"
    assert web.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secreT").status_code == 401


def test_metrics_refuse_the_token_in_another_scheme(web, settings) -> None:
    settings.METRICS_TOKEN = "scrape-secret"
    assert web.get("/metrics", HTTP_AUTHORIZATION="Basic scrape-secret").status_code == 401


def test_metrics_accept_the_bearer_token(web, settings) -> None:
    settings.METRICS_TOKEN = "scrape-secret"
    assert scrape(web, HTTP_AUTHORIZATION="Bearer scrape-secret")


def test_wrong_metrics_tokens_are_limited_per_client_address(web, settings) -> None:
    settings.METRICS_TOKEN = "scrape-secret"
    settings.AUTH_FAILURE_LIMIT = 3
    for _ in range(3):
        assert web.get("/metrics", HTTP_AUTHORIZATION="Bearer guess", REMOTE_ADDR="198.51.100.7").status_code == 401

    # While the address is limited, the right token is refused too; another address scrapes.
    locked_out = web.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret", REMOTE_ADDR="198.51.100.7")
    assert locked_out.status_code == 429
    assert locked_out.json() == {"status": "ERROR", "message": TOO_MANY_FAILURES}
    assert 0 < int(locked_out["Retry-After"]) <= settings.AUTH_FAILURE_WINDOW_SECONDS
    assert web.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret", REMOTE_ADDR="198.51.100.8").status_code == 200


def test_metrics_are_never_cached(web) -> None:
    assert "no-cache" in web.get("/metrics")["Cache-Control"]


def test_the_exposition_has_no_raw_ids_or_keys(web, tenant) -> None:
    web.get(f"/api/v1/sales/987654?{tenant.query(tenant.admin_key)}")
    body = web.get("/metrics").content.decode()
    # In no label (a sample's value, a memory size say, may contain the digits by chance).
    assert not re.search(r"\{[^}]*987654[^}]*\}", body)
    assert "/api/v1/sales/987654" not in body
    assert not re.search(r"rk_[0-9a-f]{8}", body)


def test_circuit_breakers_paused_deliveries_and_disabled_queues_are_gauged(web, tenant) -> None:
    """What the breakers hold back, for an alert."""
    from django.utils import timezone

    from core import breaker
    from exports.models import ExportQueue

    for _ in range(5):
        breaker.record_failure("acct:1|https://erp.example.com:443", error="timeout")
    breaker.record_failure("acct:1|https://other.example.com:443", error="timeout")
    queue = make_sales_queue(tenant.account, "hooks")
    paused = make_delivery(queue, status=ExportStatus.PENDING)
    paused.paused_until = timezone.now() + timedelta(seconds=30)
    paused.save(update_fields=["paused_until"])
    make_sales_queue(tenant.account, "dead")
    ExportQueue.objects.filter(name="dead").update(enabled=False, disabled_at=timezone.now(), disabled_reason="x")

    samples = scrape(web)

    assert value(samples, "retail_circuit_breakers", state="open") == 1
    assert value(samples, "retail_circuit_breakers", state="closed") == 1
    assert value(samples, "retail_export_paused_deliveries", account="acme", queue="hooks") == 1
    assert value(samples, "retail_export_queue_disabled", account="acme", queue="dead") == 1
    assert value(samples, "retail_export_queue_disabled", account="acme", queue="hooks") is None
