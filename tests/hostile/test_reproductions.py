"""Hostile numbers, text and body sizes, each answered with a JSON 4xx (never a 500) before it can cost time.

That a hostile number never costs time is proven without a clock: the literal is judged by its text, and a
patched ``Decimal`` and ``int`` record every conversion the request makes; the hostile literal reaches neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from core import jsonparse
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant
from tests.support.world import World, build_world

HUGE = ("1E+1000000", "1e999999999")


@pytest.fixture
def world(db: None) -> World:
    return build_world()


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every literal the parser converts to a number, in order."""
    seen: list[str] = []

    def decimal(literal: str) -> Decimal:
        seen.append(literal)
        return Decimal(literal)

    def integer(literal: str) -> int:
        seen.append(literal)
        return int(literal)

    monkeypatch.setattr(jsonparse, "_to_decimal", decimal)
    monkeypatch.setattr(jsonparse, "_to_int", integer)
    yield seen


def basket(quantity: str) -> bytes:
    line = '{"line_item_id": "l1", "id": "p-1", "quantity": ' + quantity + ', "unit_price": 10}'
    return ('{"market": "dk", "line_items": [' + line + "]}").encode()


def post(world: World, path: str, raw: bytes) -> Any:
    return Client().post(f"{path}?{world.tenant.query(world.key_for(path))}", raw, content_type="application/json")


def answered_errors(response: Any) -> list[dict[str, str]]:
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    return body.get("errors") or [e for item in body.get("failed", []) for e in item["errors"]]


# --- 1. A huge exponent cannot hold a web process: refused before any conversion -------------------------------


@pytest.mark.parametrize("literal", HUGE)
def test_a_basket_quantity_with_a_huge_exponent_is_refused_before_any_conversion(
    world: World, conversions: list[str], literal: str
) -> None:
    response = post(world, "/api/v1/pos/baskets/price", basket(literal))

    assert response.status_code == 400
    [error] = answered_errors(response)
    assert (error["field"], error["code"]) == ("line_items[0].quantity", "number_out_of_range")
    assert literal not in conversions
    assert "10" in conversions  # the converter is the one the parser calls


@pytest.mark.parametrize("literal", HUGE)
def test_an_integrator_answer_with_a_huge_exponent_is_a_502_naming_its_path(
    tenant: Tenant, configure: Any, reference: ReferenceIntegrator, conversions: list[str], literal: str
) -> None:
    configure("giftcard_read")
    card = '{"id": "gc", "code": "GC1", "amount": 10, "currency_code": "DKK", "create_date": 1, "expiry_date": 2'
    reference.script["/giftcards/{code}"] = [("garbage", f'{card}, "status": {literal}}}'.encode())]

    response = Client().get(f"/api/v1/pos/giftcards/GC1/?{tenant.query(tenant.pos_key, currency_code='DKK')}")

    assert response.status_code == 502
    assert "status" in response.json()["message"]
    assert literal not in conversions


# --- 2. Numbers and text no conversion can take: a JSON 4xx, never a 500 ---------------------------------------

OVERFLOW_TARGETS = [
    (
        "/imports/incoming_orders?stock_location=shop-1",
        '{"orders": [{"order_identifier": "o1", "basket": {"currency": "DKK", "line_items": '
        '[{"product_identifier": "p", "name": "n", "quantity": 1, "price": %s}]}}]}',
    ),
    ("/api/v1/pos/checkouts", '{"identifier": "co-x", "payments": [{"amount": %s}]}'),
    ("/api/v1/pos/giftcards/", '{"amount": %s, "currency_code": "DKK"}'),
    ("/api/v1/pos/registers/reg-1/open", '{"cash_total_at_open": %s}'),
    ("/api/v1/products/", '{"id": "p-9", "name": "n", "retail_price": %s}'),
]


@pytest.mark.parametrize(("path", "template"), OVERFLOW_TARGETS, ids=[t[0] for t in OVERFLOW_TARGETS])
@pytest.mark.parametrize("literal", ["1e1000000", "1E+999999999", "-1e1000001"])
def test_an_exponent_past_decimal_limits_is_a_400_naming_the_field(
    world: World, path: str, template: str, literal: str
) -> None:
    url, _, query = path.partition("?")
    response = Client().post(
        f"{url}?{world.tenant.query(world.key_for(url))}&{query}",
        (template % literal).encode(),
        content_type="application/json",
    )

    assert response.status_code == 400
    errors = answered_errors(response)
    assert [e["code"] for e in errors] == ["number_out_of_range"]
    assert errors[0]["field"].split(".")[-1] in ("price", "amount", "cash_total_at_open", "retail_price")


SURROGATE_TARGETS = [
    "/imports/incoming_orders?stock_location=shop-1",
    "/imports/external_orders?stock_location=shop-1",
    "/imports/outgoing_order_state_changes",
    "/imports/discount_campaigns",
    "/imports/product_rules",
    "/imports/stock_events",
    "/api/v1/pos/checkouts",
    "/api/v1/pos/baskets/price",
    "/api/v1/pos/stock-events",
    "/api/v1/pos/newsletter-signups",
    "/api/v1/pos/outgoing-orders",
    "/api/v1/pos/giftcards/",
    "/api/v1/pos/shipping-options",
    "/api/v1/products/",
    "/api/v1/markets/",
]


@pytest.mark.parametrize("path", SURROGATE_TARGETS)
def test_a_lone_surrogate_is_a_400_whose_answer_renders(world: World, path: str) -> None:
    url, _, query = path.partition("?")
    key = {"orders": "o", "external_orders": "o", "campaigns": "c", "product_rules": "r", "stock_events": "s"}
    items = [k for k in key if url.endswith(k)]
    raw = ('{"' + items[0] + '": [{"id": "\\ud800", "order_identifier": "a\\udfffb"}]}') if items else None
    if url.endswith("state_changes"):
        raw = '[{"stock_location": "shop-1", "order_identifier": "\\ud800", "state": "ready"}]'
    raw = raw or '{"identifier": "\\ud800", "name": "x\\udbffy", "email": "\\ud800@x.dk"}'

    response = Client().post(
        f"{url}?{world.tenant.query(world.key_for(url))}&{query}", raw.encode(), content_type="application/json"
    )

    assert response.status_code == 400
    errors = answered_errors(response)
    assert errors and all(e["code"] == "invalid_text" for e in errors)
    # The answer is UTF-8 and holds no surrogate: nothing echoes the refused text as it came.
    text = json.dumps(json.loads(response.content.decode("utf-8")), ensure_ascii=False)
    assert not re.search("[\ud800-\udfff]", text)


@pytest.mark.parametrize("path", ["/api/v1/sales/", "/api/v1/checkouts/", "/api/v1/export-queues/"])
def test_a_5000_digit_id_in_the_path_is_a_json_404(world: World, path: str) -> None:
    response = Client().get(f"{path}{'1' * 5000}?{world.tenant.query(world.tenant.admin_key)}")

    assert response.status_code == 404
    assert response.json()["status"] == "ERROR"


def test_an_id_past_the_64_bit_range_is_a_json_404(world: World) -> None:
    response = Client().get(f"/api/v1/sales/{'9' * 19}?{world.tenant.query(world.tenant.admin_key)}")

    assert response.status_code == 404
    assert response.json()["status"] == "ERROR"


# --- 3. Bodies over the limits: the same JSON 413 everywhere, before parsing -----------------------------------


def test_a_10_mb_checkout_of_numbers_is_a_413_without_parsing(world: World, conversions: list[str]) -> None:
    raw = b'{"identifier": "co-x", "payments": [' + b",".join([b"1.5"] * 2_500_000) + b"]}"

    response = post(world, "/api/v1/pos/checkouts", raw)

    assert response.status_code == 413
    assert response.json()["errors"][0]["field"] == "body"
    assert conversions == []


@pytest.mark.parametrize("path", ["/api/v1/markets/", "/api/v1/export-queues/preview/"])
def test_a_body_over_10_mib_on_the_rest_api_is_the_json_413(world: World, path: str) -> None:
    raw = b'{"x": "' + b"a" * (10 * 1024 * 1024 + 1) + b'"}'

    response = post(world, path, raw)

    assert response.status_code == 413
    assert response.json() == {
        "status": "ERROR",
        "message": response.json()["message"],
        "errors": [{"field": "body", "message": response.json()["message"], "code": "too_large"}],
    }


def test_a_batch_keeps_its_good_items_when_one_holds_a_refused_value(world: World) -> None:
    order = {
        "order_identifier": "o-good",
        "basket": {
            "currency": "DKK",
            "line_items": [{"product_identifier": "p", "name": "n", "quantity": 1, "price": 10}],
        },
    }
    raw = json.dumps({"orders": [order, {**order, "order_identifier": "o-bad"}]}).replace('"o-bad"', '"o-\\ud800"')

    response = Client().post(
        f"/imports/incoming_orders?{world.tenant.query(world.tenant.imports_key, stock_location='shop-1')}",
        raw.encode(),
        content_type="application/json",
    )

    body = response.json()
    assert response.status_code == 207
    assert [f["index"] for f in body["failed"]] == [1]
    assert body["failed"][0]["errors"][0]["field"] == "order_identifier"


def test_an_import_of_millions_of_numbers_is_a_413_before_parsing(world: World, conversions: list[str]) -> None:
    raw = b'{"orders": [' + b",".join([b"1.5"] * 2_500_000) + b"]}"  # 10 MB: within the import byte limit

    response = Client().post(
        f"/imports/incoming_orders?{world.tenant.query(world.tenant.imports_key, stock_location='shop-1')}",
        raw,
        content_type="application/json",
    )

    assert response.status_code == 413
    assert response.json()["errors"][0]["code"] == "too_many_values"
    assert conversions == []
