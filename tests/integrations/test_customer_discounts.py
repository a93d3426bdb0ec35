"""Customer-specific discounts in basket pricing (``POST /api/v1/pos/baskets/price`` with a ``customer``):
fetched from the ``customer_discounts`` integration and evaluated with the account's campaigns."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.support.api import PosApi, priced
from tests.support.reference_server import ReferenceIntegrator, customer_discount
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]
DISCOUNTS = "/customers/{customer_id}/discounts"


def basket(customer: str | None = "c-1") -> dict[str, Any]:
    body: dict[str, Any] = {
        "market": "dk",
        "line_items": [{"line_item_id": "li-1", "id": "p-1", "quantity": 2, "unit_price": 100}],
    }
    if customer is not None:
        body["customer"] = {"identifier": customer}
    return body


def discount(**fields: Any) -> dict[str, Any]:
    return {**customer_discount("1"), **fields}


def test_the_customers_discount_prices_the_basket(pos: PosApi, configure: Configure) -> None:
    configure("customer_discounts")

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("158")
    assert answer["line_items"][0]["discounts"][0]["discount"]["id"] == "cd-c-1"
    assert "warnings" not in answer


def test_the_discounts_are_asked_for_the_customer_market_and_base_currency(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")

    pos.post("baskets/price", basket("c-42"))

    request = reference.last("/customers/c-42/discounts")
    assert request.query == {"market": "dk", "currency_code": "DKK"}


def test_without_a_customer_the_integrator_is_not_asked(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")

    answer = priced(pos.post("baskets/price", basket(customer=None)))

    assert answer["total"] == Decimal("200")
    assert reference.requests == []


def test_without_an_integration_the_basket_is_priced_silently(pos: PosApi) -> None:
    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")
    assert "warnings" not in answer


def test_an_integrator_failing_prices_without_them_and_warns(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    reference.script[DISCOUNTS] = [(503, "down")]

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")
    [warning] = answer["warnings"]
    assert warning["code"] == "customer_discounts_unavailable"
    assert warning["field"] == "customer"


def test_a_slow_integrator_prices_without_them_and_warns(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts", timeout="0.2")
    reference.script[DISCOUNTS] = [("sleep", 2)]

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")
    assert answer["warnings"][0]["code"] == "customer_discounts_unavailable"


def test_an_answer_that_is_not_an_array_prices_without_them_and_warns(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    reference.script[DISCOUNTS] = [(200, {"discounts": []})]

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")
    assert answer["warnings"][0]["code"] == "customer_discounts_unavailable"


def test_an_html_answer_prices_without_them_and_warns(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    reference.script[DISCOUNTS] = [("html", "<html>login</html>")]

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")
    assert answer["warnings"][0]["code"] == "customer_discounts_unavailable"


def test_a_bad_discount_is_left_out_with_a_warning_and_the_good_ones_apply(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    bad = discount(id="cd-bad", new_price_per_item={"dk": 10})
    good = discount(id="cd-good", new_price_per_item=90)
    reference.script[DISCOUNTS] = [(200, [bad, good])]

    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("180")
    [warning] = answer["warnings"]
    assert warning["code"] == "invalid_customer_discount"
    assert warning["field"] == "customer_discounts[0].new_price_per_item"


def test_customer_discounts_compete_with_the_accounts_campaigns_by_priority(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, client: APIClient, tenant: Tenant
) -> None:
    configure("customer_discounts")
    campaign = discount(id="everyone", new_price_per_item=50, priority=1)
    response = client.post(
        f"/imports/discount_campaigns?{tenant.query(markets='dk')}",
        json.dumps({"campaigns": [campaign]}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content

    answer = priced(pos.post("baskets/price", basket()))

    # The customer's discount (priority 10) is evaluated first and does not continue evaluation.
    assert answer["total"] == Decimal("158")
