"""``GET /api/v1/pos/products/search`` and ``/products/lookup`` end to end against the reference integrator."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from ledger.models import Product, ProductEditEvent
from tests.support.api import PosApi
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db


Configure = Callable[..., Any]


# --- product search ------------------------------------------------------------------------------------------


def test_search_answers_the_integrators_products(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="sweater")

    assert response.status_code == 200
    found = response.json()["results"]
    assert [p["id"] for p in found] == ["web-1", "web-2"]
    assert found[0]["name"] == {"da": "Trøje", "en": "Sweater"}
    assert Decimal(str(found[0]["retail_price"])) == Decimal("499.95")


def test_search_sends_the_term_market_currency_and_shop(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")

    pos.get("products/search", q="blå trøje", shop_id="shop-1", limit="10")

    sent = reference.last("/products/search").query
    assert sent == {"q": "blå trøje", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": "10"}


def test_search_works_with_a_trailing_slash(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search/", q="x")

    assert response.status_code == 200


def test_search_with_no_results_answers_an_empty_list(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="nothing")

    assert response.json() == {"results": []}


def test_search_answers_at_most_the_limit_even_if_the_integrator_ignores_it(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="x", limit="1")

    assert [p["id"] for p in response.json()["results"]] == ["web-1"]


def test_search_without_a_term_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="  ")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "q"


@pytest.mark.parametrize("limit", ["0", "201", "ten", "-1"])
def test_search_with_a_bad_limit_is_refused(pos: PosApi, configure: Configure, limit: str) -> None:
    configure("product_search")

    response = pos.get("products/search", q="x", limit=limit)

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "limit"


def test_search_in_an_unknown_market_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="x", market="se")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "market"


def test_search_in_an_unknown_shop_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("product_search")

    response = pos.get("products/search", q="x", shop_id="nope")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "shop_id"


def test_search_without_an_integration_is_a_404_saying_so(pos: PosApi) -> None:
    response = pos.get("products/search", q="x")

    assert response.status_code == 404
    body = response.json()
    assert body["status"] == "ERROR"
    assert "No product search integration is configured" in body["message"]


def test_search_does_not_use_another_accounts_integration(pos: PosApi, configure: Configure) -> None:
    configure("product_search", account=make_tenant("other").account)

    response = pos.get("products/search", q="x")

    assert response.status_code == 404


def test_a_product_without_a_price_is_a_bad_answer_naming_the_field(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    reference.script["/products/search"] = [(200, [{"id": "a", "retail_price": 1}, {"id": "b", "name": "No price"}])]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502
    body = response.json()
    assert body["errors"][0]["field"] == "[1].retail_price"
    assert body["errors"][0]["code"] == "bad_answer"


def test_an_object_instead_of_an_array_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    reference.script["/products/search"] = [(200, {"products": []})]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502
    assert response.json()["errors"][0]["code"] == "bad_answer"


def test_an_html_answer_is_a_502(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_search")
    reference.script["/products/search"] = [("html", "<html><body>Login</body></html>")]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502
    assert response.json()["status"] == "ERROR"


def test_truncated_json_from_the_integrator_is_a_502(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_search")
    reference.script["/products/search"] = [("garbage", b'[{"id": "a", "retail_pri')]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502


def test_an_integrator_error_status_is_a_502(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_search")
    reference.script["/products/search"] = [(503, "down for maintenance")]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502
    assert response.json()["status"] == "ERROR"


def test_a_slow_integrator_is_a_504(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_search", timeout="0.2")
    reference.script["/products/search"] = [("sleep", 2)]

    response = pos.get("products/search", q="x")

    assert response.status_code == 504
    assert response.json()["status"] == "ERROR"


def test_a_closed_connection_is_a_502(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_search")
    reference.script["/products/search"] = [("close", None)]

    response = pos.get("products/search", q="x")

    assert response.status_code == 502


def test_search_needs_a_pos_key(client: APIClient, tenant: Tenant, configure: Configure) -> None:
    configure("product_search")

    response = client.get(f"/api/v1/pos/products/search?{tenant.query(tenant.admin_key, q='x')}")

    assert response.status_code == 403


# --- product lookup ------------------------------------------------------------------------------------------


def test_lookup_imports_a_new_product_and_returns_it(pos: PosApi, configure: Configure) -> None:
    configure("product_lookup")

    response = pos.get("products/lookup", barcode="5701234567890")

    assert response.status_code == 200
    body = response.json()
    assert body["outcome"] == "created"
    assert body["product"]["id"] == "ext-5701234567890"
    product = Product.objects.get(product_id="ext-5701234567890")
    assert product.barcode == "5701234567890"
    assert product.retail_price == Decimal("149.95")


def test_lookup_of_a_new_product_emits_a_create_product_edit_event(pos: PosApi, configure: Configure) -> None:
    configure("product_lookup")

    pos.get("products/lookup", barcode="5701234567890")

    event = ProductEditEvent.objects.get(product_id="ext-5701234567890")
    assert event.event == ProductEditEvent.Event.CREATE
    assert event.document["product"]["retail_price"] == Decimal("149.95")


def test_lookup_of_a_known_product_updates_it_with_an_update_event(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_lookup")
    pos.get("products/lookup", barcode="123")
    changed = {"id": "ext-123", "name": "Renamed", "barcode": "123", "retail_price": 99}
    reference.script["/products/lookup"] = [(200, changed)]

    response = pos.get("products/lookup", barcode="123")

    assert response.json()["outcome"] == "updated"
    product = Product.objects.get(product_id="ext-123")
    assert product.name == "Renamed"
    assert product.product_group == ""  # the integrator's product is the whole product: absent fields cleared
    events = list(ProductEditEvent.objects.filter(product_id="ext-123").order_by("pk").values_list("event", flat=True))
    assert events == [ProductEditEvent.Event.CREATE, ProductEditEvent.Event.UPDATE]


def test_lookup_of_an_unchanged_product_emits_nothing(pos: PosApi, configure: Configure) -> None:
    configure("product_lookup")
    pos.get("products/lookup", barcode="123")

    response = pos.get("products/lookup", barcode="123")

    assert response.json()["outcome"] == "unchanged"
    assert ProductEditEvent.objects.filter(product_id="ext-123").count() == 1


def test_lookup_sends_the_barcode_and_place(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_lookup")

    pos.get("products/lookup", barcode="ÆØÅ-1", shop_id="shop-1")

    assert reference.last("/products/lookup").query == {
        "barcode": "ÆØÅ-1",
        "market": "dk",
        "currency_code": "DKK",
        "shop_id": "shop-1",
    }


def test_lookup_of_a_code_the_integrator_does_not_know_is_a_404(pos: PosApi, configure: Configure) -> None:
    configure("product_lookup")

    response = pos.get("products/lookup", barcode="0000000000000")

    assert response.status_code == 404
    assert "0000000000000" in response.json()["message"]
    assert not Product.objects.exists()


def test_lookup_answered_with_null_is_a_404(pos: PosApi, configure: Configure, reference: ReferenceIntegrator) -> None:
    configure("product_lookup")
    reference.script["/products/lookup"] = [(200, None)]

    response = pos.get("products/lookup", barcode="1")

    assert response.status_code == 404


def test_lookup_without_a_barcode_is_refused(pos: PosApi, configure: Configure) -> None:
    configure("product_lookup")

    response = pos.get("products/lookup")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "barcode"


def test_a_looked_up_product_without_a_name_is_a_bad_answer_and_imports_nothing(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_lookup")
    reference.script["/products/lookup"] = [(200, {"id": "x", "retail_price": 5})]

    response = pos.get("products/lookup", barcode="1")

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "name"
    assert not Product.objects.exists()


def test_a_looked_up_product_priced_in_an_unknown_market_is_a_bad_answer(
    pos: PosApi, configure: Configure, reference: ReferenceIntegrator
) -> None:
    configure("product_lookup")
    reference.script["/products/lookup"] = [(200, {"id": "x", "name": "X", "retail_price": {"dk": 5, "se": 7}})]

    response = pos.get("products/lookup", barcode="1")

    assert response.status_code == 502
    assert response.json()["errors"][0]["field"] == "retail_price.se"
    assert not Product.objects.exists()


def test_lookup_imports_into_the_callers_account_only(pos: PosApi, configure: Configure, other_tenant: Tenant) -> None:
    configure("product_lookup")

    pos.get("products/lookup", barcode="123")

    assert not Product.objects.filter(account=other_tenant.account).exists()
