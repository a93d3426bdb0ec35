"""The integrator calls of a POS request share ``POS_INTEGRATION_BUDGET_SECONDS``; a call's time limit
holds for its whole answer; with the budget spent no call is made. Against the reference integrator on 127.0.0.1,
scripted to hang or to trickle its answer. No clock is read: the tests assert what the budget granted, what
timeout went down to the socket and what the call log says."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from core import budget
from integrations import runtime
from integrations.errors import IntegrationNotCalled, IntegrationTimeout
from integrations.models import IntegrationCall
from integrations.runtime import call
from tests.support.api import PosApi
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]
DISCOUNTS = "/customers/{customer_id}/discounts"
SEARCH = {"search_term": "sweater", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 20}
BASKET = {
    "market": "dk",
    "customer": {"identifier": "c-1"},
    "line_items": [{"line_item_id": "li-1", "id": "p-1", "quantity": 2, "unit_price": 100}],
}


@pytest.fixture
def budgets(monkeypatch: pytest.MonkeyPatch) -> list[budget.Budget]:
    """Every budget a request opens, to read what it granted."""
    opened: list[budget.Budget] = []
    real = budget.limit

    @contextmanager
    def recording(seconds: float) -> Iterator[budget.Budget]:
        with real(seconds) as granted:
            opened.append(granted)
            yield granted

    monkeypatch.setattr(budget, "limit", recording)
    return opened


@pytest.fixture
def sent_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The timeout of every request handed to the HTTP session (connect and read alike)."""
    sent: list[float] = []
    real = runtime._send

    def recording(integration: Any, request: Any, timeout: float) -> Any:
        sent.append(timeout)
        return real(integration, request, timeout)

    monkeypatch.setattr(runtime, "_send", recording)
    return sent


# --- a POS request --------------------------------------------------------------------------------------------


def test_a_hanging_integrator_gets_the_pos_requests_budget_not_its_own_timeout(
    pos: PosApi,
    configure: Configure,
    reference: ReferenceIntegrator,
    settings: Any,
    budgets: list[budget.Budget],
    sent_timeouts: list[float],
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 1
    configure("customer_discounts", timeout=30)
    reference.script[DISCOUNTS] = [("hang", None)]

    response = pos.post("baskets/price", BASKET)

    # Priced without the customer's discounts, and the cashier is told (as for any failing integrator).
    assert response.status_code == 200, response.content
    answer = json.loads(response.content, parse_float=Decimal)
    assert answer["total"] == Decimal("200")
    assert [w["code"] for w in answer["warnings"]] == ["customer_discounts_unavailable"]
    [opened] = budgets
    [granted] = opened.grants
    assert 0 < granted <= 1
    assert sent_timeouts == [round(granted, 3)]
    logged = IntegrationCall.objects.get()
    assert (logged.kind, logged.ok, logged.status_code) == ("customer_discounts", False, None)
    assert logged.error == (
        f"the integrator did not answer within {round(granted, 3):g} s (what was left of the POS request's 1 s)"
    )
    assert len(reference.requests) == 1


def test_another_pos_endpoint_answers_its_documented_504_within_the_budget(
    client: APIClient,
    pos: PosApi,
    configure: Configure,
    reference: ReferenceIntegrator,
    settings: Any,
    budgets: list[budget.Budget],
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 1
    configure("product_search", timeout=30)
    reference.script["/products/search"] = [("hang", None)]

    response = client.get(pos.url("products/search") + "&q=sweater")

    assert response.status_code == 504, response.content
    [granted] = budgets[0].grants
    assert response.json()["message"] == (
        f"the integrator did not answer within {round(granted, 3):g} s (what was left of the POS request's 1 s)"
    )


def test_a_call_faster_than_the_budget_keeps_its_own_shorter_timeout(
    pos: PosApi, configure: Configure, settings: Any, sent_timeouts: list[float]
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 10
    configure("customer_discounts", timeout="0.5")

    assert pos.post("baskets/price", BASKET).status_code == 200

    assert sent_timeouts == [0.5]


def test_with_the_budget_spent_the_integrator_is_not_called_and_the_basket_is_priced_with_a_warning(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 0.05  # less than any call may be given
    configure("customer_discounts")

    answer = pos.post("baskets/price", BASKET).json()

    assert [w["code"] for w in answer["warnings"]] == ["customer_discounts_unavailable"]
    assert "not called" in answer["warnings"][0]["message"]
    assert reference.requests == []


def test_with_the_budget_spent_another_pos_endpoint_answers_504_without_calling(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 0.05
    configure("product_search")

    response = client.get(pos.url("products/search") + "&q=sweater")

    assert response.status_code == 504
    assert response.json()["message"] == "not called: the POS request's 0.05 s for integrator calls are spent"
    assert reference.requests == []


def test_without_a_pos_budget_setting_a_call_gets_its_own_timeout(
    pos: PosApi, configure: Configure, settings: Any, budgets: list[budget.Budget], sent_timeouts: list[float]
) -> None:
    settings.POS_INTEGRATION_BUDGET_SECONDS = 0
    configure("customer_discounts", timeout=30)

    assert pos.post("baskets/price", BASKET).status_code == 200

    assert (budgets, sent_timeouts) == ([], [30.0])


# --- the call itself -------------------------------------------------------------------------------------------


def test_a_spent_budget_makes_no_call_and_logs_why(
    tenant: Tenant, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")

    with budget.limit(0.05), pytest.raises(IntegrationNotCalled) as caught:
        call(account=tenant.account, kind="product_search", values=SEARCH)

    assert (caught.value.status_code, caught.value.code) == (504, "integration_not_called")
    assert reference.requests == []
    logged = IntegrationCall.objects.get()
    assert (logged.ok, logged.status_code, logged.error) == (
        False,
        None,
        "not called: the POS request's 0.05 s for integrator calls are spent",
    )


def test_calls_in_one_request_share_the_budget(tenant: Tenant, configure: Configure) -> None:
    configure("product_search", timeout=30)

    with budget.limit(5) as opened:
        call(account=tenant.account, kind="product_search", values=SEARCH)
        call(account=tenant.account, kind="product_search", values=SEARCH)

    first, second = opened.grants
    assert 0 < second < first <= 5


def test_a_budget_inside_another_never_outlasts_it() -> None:
    with budget.limit(1) as outer, budget.limit(60) as inner:
        assert inner.deadline <= outer.deadline


@pytest.mark.parametrize("trickle", ["trickle", "trickle_body"])
def test_the_timeout_holds_for_the_whole_answer_not_for_each_read(
    tenant: Tenant, configure: Configure, reference: ReferenceIntegrator, trickle: str
) -> None:
    # A byte every 50 ms: no read ever waits 0.5 s, but the whole answer would take seconds.
    reference.script["*"] = [(trickle, 0.05, (200, {"results": ["x" * 200]}))]
    configure("product_search", timeout="0.5")

    with pytest.raises(IntegrationTimeout) as caught:
        call(account=tenant.account, kind="product_search", values=SEARCH)

    assert caught.value.message == "the integrator did not answer within 0.5 s"
    assert IntegrationCall.objects.get().error == "the integrator did not answer within 0.5 s"


def test_the_connection_cut_at_the_deadline_is_not_reused(
    tenant: Tenant, configure: Configure, reference: ReferenceIntegrator
) -> None:
    reference.script["*"] = [("trickle_body", 0.05, (200, {"results": ["x" * 200]}))]
    configure("product_search", timeout="0.5")
    with pytest.raises(IntegrationTimeout):
        call(account=tenant.account, kind="product_search", values=SEARCH)

    result = call(account=tenant.account, kind="product_search", values=SEARCH)

    assert result.status_code == 200
    assert reference.requests[0].client_port != reference.requests[1].client_port
