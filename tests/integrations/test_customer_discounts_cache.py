"""A customer's discounts are asked once for the basket changes of ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS``
(remembered per account, customer, market and currency in the database), counted at the reference integrator.
Expiry is shown by ageing the remembered answer, never by waiting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from integrations import retention
from integrations.models import CustomerDiscountsAnswer
from tests.factories import MarketFactory
from tests.support.api import PosApi, priced
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

Configure = Callable[..., Any]
DISCOUNTS = "/customers/{customer_id}/discounts"


def basket(customer: str = "c-1", market: str = "dk", quantity: int = 2) -> dict[str, Any]:
    return {
        "market": market,
        "customer": {"identifier": customer},
        "line_items": [{"line_item_id": "li-1", "id": "p-1", "quantity": quantity, "unit_price": 100}],
    }


def asked(reference: ReferenceIntegrator) -> list[str]:
    return [r.path for r in reference.requests]


def age_answers(seconds: int) -> None:
    CustomerDiscountsAnswer.objects.update(fetched_at=timezone.now() - timedelta(seconds=seconds))


def test_the_next_basket_change_is_priced_without_asking_the_integrator_again(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")

    first = priced(pos.post("baskets/price", basket(quantity=2)))
    second = priced(pos.post("baskets/price", basket(quantity=3)))

    assert asked(reference) == ["/customers/c-1/discounts"]
    assert (first["total"], second["total"]) == (Decimal("158"), Decimal("237"))
    assert second["line_items"][0]["discounts"][0]["discount"]["id"] == "cd-c-1"


def test_a_remembered_answer_older_than_the_setting_is_asked_again(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS = 60
    configure("customer_discounts")
    pos.post("baskets/price", basket())
    age_answers(59)
    pos.post("baskets/price", basket())
    assert len(reference.requests) == 1

    age_answers(61)
    pos.post("baskets/price", basket())

    assert len(reference.requests) == 2


def test_the_integrators_new_answer_replaces_the_remembered_one(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    pos.post("baskets/price", basket())
    age_answers(3600)
    cheaper = {
        "id": "cd-new",
        "type": "new_price_discount-single_product",
        "product_id": "p-1",
        "new_price_per_item": 50,
        "name": "Customer price",
        "display_name": "Your price",
        "priority": 10,
    }
    reference.script[DISCOUNTS] = [(200, [cheaper])]

    assert priced(pos.post("baskets/price", basket()))["total"] == Decimal("100")
    assert priced(pos.post("baskets/price", basket()))["total"] == Decimal("100")
    assert len(reference.requests) == 2
    assert CustomerDiscountsAnswer.objects.count() == 1


def test_a_failure_is_not_remembered(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("customer_discounts")
    reference.script[DISCOUNTS] = [(503, "down")]

    failed = priced(pos.post("baskets/price", basket()))
    recovered = priced(pos.post("baskets/price", basket()))
    remembered = priced(pos.post("baskets/price", basket()))

    assert failed["warnings"][0]["code"] == "customer_discounts_unavailable"
    assert recovered["total"] == remembered["total"] == Decimal("158")
    assert "warnings" not in recovered and "warnings" not in remembered
    assert len(reference.requests) == 2  # the failure, then the answer that is remembered


def test_each_customer_market_and_currency_is_asked_once(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, tenant: Tenant
) -> None:
    MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    configure("customer_discounts")

    for _ in range(2):
        for customer, market in (("c-1", "dk"), ("c-2", "dk"), ("c-1", "se")):
            pos.post("baskets/price", basket(customer, market))

    assert sorted((r.path, r.query["currency_code"]) for r in reference.requests) == [
        ("/customers/c-1/discounts", "DKK"),
        ("/customers/c-1/discounts", "SEK"),
        ("/customers/c-2/discounts", "DKK"),
    ]


def test_another_accounts_answer_for_the_same_customer_is_not_used(
    client: APIClient,
    pos: PosApi,
    configure: Configure,
    reference: ReferenceIntegrator,
    other_tenant: Tenant,
) -> None:
    configure("customer_discounts")
    configure("customer_discounts", account=other_tenant.account)
    pos.post("baskets/price", basket())
    pos.post("baskets/price", basket())
    assert len(reference.requests) == 1

    PosApi(client, other_tenant).post("baskets/price", basket())

    assert len(reference.requests) == 2


def test_a_changed_configuration_asks_again(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("customer_discounts")
    pos.post("baskets/price", basket())
    pos.post("baskets/price", basket())
    assert len(reference.requests) == 1

    configure("customer_discounts", query={"market": "{market}", "currency_code": "{currency_code}", "v": "2"})
    pos.post("baskets/price", basket())

    assert [r.query.get("v") for r in reference.requests] == [None, "2"]


def test_a_disabled_configuration_is_not_answered_from_memory(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    pos.post("baskets/price", basket())
    assert priced(pos.post("baskets/price", basket()))["total"] == Decimal("158")  # remembered

    configure("customer_discounts", enabled=False)
    answer = priced(pos.post("baskets/price", basket()))

    assert answer["total"] == Decimal("200")  # no configuration: no customer discounts, silently
    assert len(reference.requests) == 1


def test_the_customers_discounts_endpoint_asks_afresh_and_the_baskets_use_its_answer(
    client: APIClient, pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("customer_discounts")
    pos.post("baskets/price", basket())

    fresh = client.get(pos.url("customers/c-1/discounts") + "&market=dk")
    pos.post("baskets/price", basket())

    assert fresh.status_code == 200, fresh.content
    assert len(reference.requests) == 2


def test_zero_seconds_asks_on_every_basket(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS = 0
    configure("customer_discounts")

    pos.post("baskets/price", basket())
    pos.post("baskets/price", basket())

    assert len(reference.requests) == 2
    assert not CustomerDiscountsAnswer.objects.exists()


def test_retention_deletes_the_answers_that_can_no_longer_be_used(
    pos: PosApi, configure: Configure, tenant: Tenant
) -> None:
    configure("customer_discounts")
    pos.post("baskets/price", basket("c-old"))
    age_answers(61)
    pos.post("baskets/price", basket("c-new"))

    assert retention.prune_customer_discounts_answers() == 1

    assert list(CustomerDiscountsAnswer.objects.values_list("customer_id", flat=True)) == ["c-new"]
