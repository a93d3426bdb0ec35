"""Hostile input: every answer is a 4xx JSON error or a correct 2xx, and nothing valid is lost."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imports.models import ImportItem, ImportStatus
from orders.models import IncomingOrder
from tests.support.imports import materialise_pending, order, post

pytestmark = pytest.mark.django_db

PATH = "incoming_orders"


def post_raw(client, tenant, raw: bytes, content_type: str = "application/json"):
    return post(client, tenant, PATH, None, raw=raw, content_type=content_type, stock_location="shop-1")


def assert_json_error(response, status: int, code: str) -> None:
    assert response.status_code == status
    body = response.json()
    assert body["status"] == "ERROR"
    assert body["errors"][0]["code"] == code


def test_truncated_json_is_a_400_naming_the_position(tenant, client):
    raw = json.dumps({"orders": [order()]}).encode()[:-7]
    r = post_raw(client, tenant, raw)
    assert_json_error(r, 400, "invalid_json")
    assert "char" in r.json()["message"]


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_numbers_are_refused(tenant, client, literal):
    raw = json.dumps({"orders": [order()]}).replace("149.95", "@").encode().replace(b"@", literal)
    assert_json_error(post_raw(client, tenant, raw), 400, "invalid_json")


def test_a_number_with_too_many_digits_is_an_item_error(tenant, client):
    raw = json.dumps({"orders": [order()]}).replace("149.95", "@").encode().replace(b"@", b"9" * 5000)
    r = post_raw(client, tenant, raw)
    assert r.status_code == 400
    error = r.json()["failed"][0]["errors"][0]
    assert (error["field"], error["code"]) == ("basket.line_items[0].price", "number_out_of_range")


def test_a_huge_exponent_is_an_item_error(tenant, client):
    raw = json.dumps({"orders": [order()]}).replace("149.95", "1e400").encode()
    r = post_raw(client, tenant, raw)
    assert r.status_code == 400
    assert r.json()["failed"][0]["errors"][0]["field"] == "basket.line_items[0].price"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_that_is_not_declared_json_is_a_415(tenant, client, content_type):
    r = post_raw(client, tenant, json.dumps({"orders": [order()]}).encode(), content_type=content_type)
    assert_json_error(r, 415, "unsupported_media_type")


def test_json_with_a_charset_parameter_is_accepted(tenant, client):
    r = post_raw(client, tenant, json.dumps({"orders": [order()]}).encode(), "application/json; charset=utf-8")
    assert r.status_code == 200


def test_an_empty_body_is_a_400(tenant, client):
    assert_json_error(post_raw(client, tenant, b""), 400, "empty")


def test_invalid_utf8_is_a_400(tenant, client):
    assert_json_error(post_raw(client, tenant, b'{"orders": ["\xff\xfe"]}'), 400, "invalid_encoding")


def test_deep_nesting_is_a_400_not_a_crash(tenant, client):
    assert_json_error(post_raw(client, tenant, b"[" * 100_000 + b"]" * 100_000), 400, "too_deep")


def test_a_body_over_the_limit_is_a_413(tenant, client, settings):
    settings.IMPORT_MAX_BODY_BYTES = 10 * 1024 * 1024
    padding = "x" * (10 * 1024 * 1024)
    r = post_raw(client, tenant, json.dumps({"orders": [order(note=padding)]}).encode())
    assert_json_error(r, 413, "too_large")
    assert not ImportItem.objects.exists()


@pytest.mark.parametrize("body", [[order()], "orders", 42, None, {"orders": None}, {"orders": {"0": order()}}])
def test_a_body_of_the_wrong_shape_is_a_400(tenant, client, body):
    r = post(client, tenant, PATH, body, stock_location="shop-1")
    assert r.status_code == 400
    assert r.json()["status"] == "ERROR"


def test_items_of_wrong_types_are_reported_and_valid_ones_kept(tenant, client):
    batch = [order("ok-1"), None, 7, "order", [], {"order_identifier": ["x"]}, order("ok-2")]
    r = post(client, tenant, PATH, {"orders": batch}, stock_location="shop-1")
    assert r.status_code == 207
    assert [f["index"] for f in r.json()["failed"]] == [1, 2, 3, 4, 5]
    materialise_pending(tenant)
    assert set(IncomingOrder.objects.values_list("order_identifier", flat=True)) == {"ok-1", "ok-2"}


def test_unicode_identifiers_and_names_round_trip(tenant, client):
    body = order("ordre-æøå-🛒")
    body["basket"]["line_items"][0]["name"] = "Ærø 🍺 عربى"
    r = post(client, tenant, PATH, {"orders": [body]}, stock_location="shop-1")
    assert r.status_code == 200
    materialise_pending(tenant)
    stored = IncomingOrder.objects.get()
    assert stored.order_identifier == "ordre-æøå-🛒"
    assert stored.basket["line_items"][0]["name"] == "Ærø 🍺 عربى"


def test_a_batch_of_10000_orders_is_queued_and_materialised_whole(tenant, client):
    batch = [order(f"bulk-{i}") for i in range(10_000)]
    r = post(client, tenant, PATH, {"orders": batch}, stock_location="shop-1")
    assert r.status_code == 200
    assert r.json()["message"] == "Import of 10000 order(s) initiated"
    materialise_pending(tenant)
    assert IncomingOrder.objects.count() == 10_000
    assert ImportItem.objects.filter(status=ImportStatus.SUCCESS).count() == 10_000


def test_more_items_than_the_limit_is_a_413(tenant, client, settings):
    settings.IMPORT_MAX_ITEMS = 3
    r = post(client, tenant, PATH, {"orders": [order(f"o{i}") for i in range(4)]}, stock_location="shop-1")
    assert_json_error(r, 413, "too_many_items")


def test_a_get_is_a_405_json_error(tenant, client):
    r = client.get(f"/imports/{PATH}?{tenant.query(stock_location='shop-1')}")
    assert r.status_code == 405
    assert r.json()["status"] == "ERROR"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_arbitrary_bytes_never_cause_a_server_error(tenant, client, raw):
    r = post_raw(client, tenant, raw)
    assert 200 <= r.status_code < 500
    assert isinstance(r.json(), dict)


def test_a_huge_identifier_is_refused_and_echoed_only_in_part(tenant, client):
    r = post(client, tenant, PATH, {"orders": [order("x" * 1_000_000)]}, stock_location="shop-1")
    assert r.status_code == 400
    [failed] = r.json()["failed"]
    assert failed["errors"][0] == {
        "field": "order_identifier",
        "message": "must be at most 255 characters",
        "code": "too_long",
    }
    assert len(failed["id"]) == 255
