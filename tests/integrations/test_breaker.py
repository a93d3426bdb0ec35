"""Runtime integrations behind a circuit breaker per integrator endpoint (the configuration's URL). While it is open
a POS request gets the documented 504 ``integration_not_called`` at once and the integrator (a real server on
127.0.0.1 counting its requests) is not called."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from core.models import BreakerState, CircuitBreaker
from integrations.errors import IntegrationFailed, IntegrationNotCalled
from integrations.models import IntegrationCall
from integrations.runtime import call
from tests.support.api import PosApi
from tests.support.outbound import cool_down_over
from tests.support.receivers import closed_port
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]
SEARCH = {"search_term": "sweater", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 20}
DISCOUNTS = "/customers/{customer_id}/discounts"
BASKET = {
    "market": "dk",
    "customer": {"identifier": "c-1"},
    "line_items": [{"line_item_id": "li-1", "id": "p-1", "quantity": 2, "unit_price": 100}],
}


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    settings.BREAKER_FAILURE_THRESHOLD = 2
    settings.BREAKER_COOLDOWN_SECONDS = 30
    settings.POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS = 0


def search(client: APIClient, pos: PosApi) -> Any:
    return client.get(pos.url("products/search") + "&q=sweater")


def open_breaker(client: APIClient, pos: PosApi, reference: ReferenceIntegrator) -> None:
    reference.script["/products/search"] = [(503, {"error": "down"}), ("close", None)]
    assert search(client, pos).status_code == 502
    assert search(client, pos).status_code == 502
    assert len(reference.requests) == 2
    assert CircuitBreaker.objects.get().state == BreakerState.OPEN


def test_an_open_breaker_answers_the_pos_504_at_once_without_calling(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    open_breaker(client, pos, reference)

    response = search(client, pos)

    assert response.status_code == 504, response.content
    body = response.json()
    assert body["message"].startswith(
        f"not called: the integrator's endpoint at {reference.url.rstrip('/')} failed 2 times"
    )
    assert "circuit breaker open" in body["message"]
    assert len(reference.requests) == 2  # the integrator counted no request
    logged = IntegrationCall.objects.order_by("pk").last()
    assert logged is not None and not logged.ok and "circuit breaker open" in logged.error


def test_the_basket_is_priced_with_a_warning_while_the_discounts_integrator_is_cut_off(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 0.5
    configure("customer_discounts", timeout=30)
    reference.always[DISCOUNTS] = ("hang", None)
    for _ in range(2):  # two timeouts of the POS budget open it
        assert pos.post("baskets/price", BASKET).status_code == 200
    assert len(reference.requests) == 2

    response = pos.post("baskets/price", BASKET)

    assert response.status_code == 200
    answer = json.loads(response.content, parse_float=Decimal)
    assert answer["total"] == Decimal("200")
    assert [w["code"] for w in answer["warnings"]] == ["customer_discounts_unavailable"]
    assert "circuit breaker open" in answer["warnings"][0]["message"]
    assert len(reference.requests) == 2


def test_after_the_cool_down_one_successful_trial_closes_it(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    open_breaker(client, pos, reference)
    cool_down_over()

    assert search(client, pos).status_code == 200
    assert CircuitBreaker.objects.get().state == BreakerState.CLOSED
    assert search(client, pos).status_code == 200
    assert len(reference.requests) == 4


def test_a_failed_trial_opens_it_again(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    open_breaker(client, pos, reference)
    cool_down_over()
    reference.script["/products/search"] = [(500, {"error": "still down"})]

    assert search(client, pos).status_code == 502
    assert search(client, pos).status_code == 504
    assert len(reference.requests) == 3
    assert CircuitBreaker.objects.get().trips == 2


def test_answers_refusing_the_request_do_not_count(tenant: Tenant, configure: Configure) -> None:
    configure("product_lookup")
    values = {"barcode": "0000000000000", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1"}
    for _ in range(4):
        with pytest.raises(IntegrationFailed) as caught:
            call(account=tenant.account, kind="product_lookup", values=values)
        assert caught.value.upstream_status == 404
    assert not CircuitBreaker.objects.filter(state=BreakerState.OPEN).exists()


def test_another_account_calling_the_same_host_is_not_cut_off(
    tenant: Tenant, client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    open_breaker(client, pos, reference)
    other = make_tenant("globex")
    configure("product_search", account=other.account)

    assert call(account=other.account, kind="product_search", values=SEARCH).status_code == 200
    with pytest.raises(IntegrationNotCalled):
        call(account=tenant.account, kind="product_search", values=SEARCH)


def test_a_broken_endpoint_does_not_cut_off_another_integration_of_the_account_on_the_same_host(
    tenant: Tenant, client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    configure("giftcard_read")
    reference.add_card("GC-1", amount=50)
    open_breaker(client, pos, reference)  # /products/search answered 503, then dropped the connection

    for _ in range(3):
        answer = call(account=tenant.account, kind="giftcard_read", values={"code": "GC-1", **SEARCH})
        assert answer.status_code == 200
    with pytest.raises(IntegrationNotCalled):
        call(account=tenant.account, kind="product_search", values=SEARCH)

    paths = [request.path for request in reference.requests]
    assert paths.count("/giftcards/GC-1") == 3 and paths.count("/products/search") == 2
    assert CircuitBreaker.objects.get().state == BreakerState.OPEN  # the gift card endpoint's was never written


def test_an_integrator_host_refusing_connections_cuts_off_the_accounts_other_integrations_there(
    tenant: Tenant, configure: Configure, reference: ReferenceIntegrator
) -> None:
    host = f"http://127.0.0.1:{closed_port()}"
    configure("product_search", url=f"{host}/products/search")
    configure("giftcard_read", url=host + "/giftcards/{code}")
    for _ in range(2):
        with pytest.raises(IntegrationFailed):
            call(account=tenant.account, kind="product_search", values=SEARCH)

    with pytest.raises(IntegrationNotCalled) as caught:
        call(account=tenant.account, kind="giftcard_read", values={"code": "GC-1", **SEARCH})

    assert caught.value.message.startswith(f"not called: connections to the integrator at {host} failed 2 times")
    [opened] = CircuitBreaker.objects.filter(state=BreakerState.OPEN)
    assert opened.key.endswith("|host")


def test_a_placeholder_in_the_path_does_not_make_another_endpoint(
    tenant: Tenant, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("giftcard_read")
    reference.script["/giftcards/GC-1"] = [(503, {"error": "down"})]
    reference.script["/giftcards/GC-2"] = [(503, {"error": "down"})]

    for code in ("GC-1", "GC-2"):
        with pytest.raises(IntegrationFailed):
            call(account=tenant.account, kind="giftcard_read", values={"code": code, **SEARCH})
    with pytest.raises(IntegrationNotCalled):
        call(account=tenant.account, kind="giftcard_read", values={"code": "GC-3", **SEARCH})

    assert CircuitBreaker.objects.get().state == BreakerState.OPEN


def test_the_admin_integration_page_shows_its_breaker(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator, admin_client: Any
) -> None:
    from django.urls import reverse

    integration = configure("product_search")
    open_breaker(client, pos, reference)
    page = admin_client.get(reverse("admin:integrations_runtimeintegration_change", args=[integration.pk]))
    assert "open until" in page.content.decode() and "2 failure(s) in a row" in page.content.decode()


def test_exports_to_the_same_host_keep_their_own_breaker(
    tenant: Tenant, client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    """A POS call is cut at the request's budget: an integrator slower than that must not pause the web hooks."""
    from core import breaker
    from exports import circuit
    from tests.support.queues import make_queue

    configure("product_search")
    open_breaker(client, pos, reference)
    queue = make_queue(tenant, reference.url + "/hooks")
    assert breaker.allow(circuit.key_of(queue) or "").allowed
