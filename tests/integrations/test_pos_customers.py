"""``GET /api/v1/pos/customers`` and ``/customers/{customer_id}/discounts`` end to end against the reference
integrator (spec: Customer rules 1-3, Customer-specific discount)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import quote, unquote

import pytest
from rest_framework.response import Response

from tests.factories import MarketFactory
from tests.support.api import PosApi
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]


def by_id(response: Response) -> dict[str, dict[str, Any]]:
    return {c["identifier"]: c for c in response.json()["results"]}


# --- customer lookup ----------------------------------------------------------------------------------------


def test_lookup_answers_the_integrators_customers(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    response = pos.get("customers", q="acme")

    assert response.status_code == 200
    assert list(by_id(response)) == ["c-1", "c-2", "c-3"]


def test_lookup_sends_the_term_market_and_shop(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_lookup")

    pos.get("customers/", q="Jens Ærø", shop_id="shop-1")

    assert reference.last("/customers").query == {"q": "Jens Ærø", "market": "dk", "shop_id": "shop-1"}


def test_the_deprecated_balance_object_is_flattened(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    customer = by_id(pos.get("customers", q="x"))["c-2"]

    assert Decimal(str(customer["balance"])) == Decimal("-250")


def test_a_customer_with_a_credit_limit_reports_what_rule_1_allows(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    customer = by_id(pos.get("customers", q="x"))["c-1"]

    assert customer["credit"] == {"balance": 100, "credit_limit": 500, "available": 600}


def test_a_customer_without_a_credit_limit_has_no_credit_rule(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    assert by_id(pos.get("customers", q="x"))["c-3"]["credit"] is None


def test_available_credit_is_never_negative(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("customer_lookup")
    reference.script["/customers"] = [(200, [{"identifier": "c", "balance": -900, "credit_limit": 500}])]

    customer = by_id(pos.get("customers", q="x"))["c"]

    assert customer["credit"]["available"] == 0


def test_an_overdue_customer_comes_with_a_deposit_prompt(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    customers = by_id(pos.get("customers", q="x"))

    assert customers["c-2"]["deposit_prompt"] == 250
    assert customers["c-1"]["deposit_prompt"] is None


def test_block_sales_is_reported_for_every_customer(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    customers = by_id(pos.get("customers", q="x"))

    assert {key: c["block_sales"] for key, c in customers.items()} == {"c-1": False, "c-2": False, "c-3": True}


def test_a_customer_with_an_organization_number_is_b2b(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    customers = by_id(pos.get("customers", q="x"))

    assert customers["c-1"]["b2b"] is True
    assert customers["c-2"]["b2b"] is False


def test_lookup_with_no_results_answers_an_empty_list(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    assert pos.get("customers", q="nothing").json() == {"results": []}


def test_lookup_without_a_term_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    response = pos.get("customers")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "q"


def test_a_too_long_term_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("customer_lookup")

    response = pos.get("customers", q="x" * 256)

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "too_long"


def test_lookup_without_an_integration_is_a_404(pos: PosApi) -> None:
    response = pos.get("customers", q="x")

    assert response.status_code == 404
    assert response.json()["errors"][0]["code"] == "not_configured"


def test_a_customer_without_identifier_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_lookup")
    reference.script["/customers"] = [(200, [{"identifier": "ok"}, {"name": "Nameless"}])]

    response = pos.get("customers", q="x")

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "[1].identifier"


def test_a_customer_lookup_failing_upstream_is_a_502(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_lookup")
    reference.script["/customers"] = [(500, {"error": "boom"})]

    response = pos.get("customers", q="x")

    assert response.status_code == 502
    assert response.json()["status"] == "ERROR"


# --- customer-specific discounts ------------------------------------------------------------------------------


def test_discounts_answers_the_customers_discounts(pos: PosApi, configure: Configure) -> None:
    configure("customer_discounts")

    response = pos.get("customers/c-1/discounts", market="dk")

    assert response.status_code == 200
    [discount] = response.json()["results"]
    assert discount["id"] == "cd-c-1"
    assert discount["new_price_per_item"] == 79


def test_discounts_send_the_customer_market_and_base_currency(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")

    pos.get(f"customers/{quote('kunde ø 1', safe='')}/discounts/")

    request = reference.last("/customers/")
    assert unquote(request.path) == "/customers/kunde ø 1/discounts"
    assert request.query == {"market": "dk", "currency_code": "DKK"}


def test_discounts_need_a_market_when_the_account_has_several(
    pos: PosApi, configure: Configure, tenant: Tenant
) -> None:
    configure("customer_discounts")
    MarketFactory(account=tenant.account, identifier="se", currency="SEK")

    response = pos.get("customers/c-1/discounts")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "market"


def test_a_discount_with_a_market_price_object_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    discount = {
        "id": "d",
        "type": "new_price_discount-single_product",
        "product_id": "p-1",
        "new_price_per_item": {"dk": 79},
        "name": "n",
        "display_name": "d",
        "priority": 1,
    }
    reference.script["/customers/{customer_id}/discounts"] = [(200, [discount])]

    response = pos.get("customers/c-1/discounts", market="dk")

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "[0].new_price_per_item"


def test_discounts_without_an_integration_are_a_404(pos: PosApi) -> None:
    response = pos.get("customers/c-1/discounts", market="dk")

    assert response.status_code == 404


def test_a_term_with_a_nul_character_is_refused(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_lookup")

    response = pos.get("customers", q="ab\x00c")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "q"
    assert reference.requests == []
