"""POST /api/v1/pos/stock-events and the stock read API (spec: Stock event)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from accounts.models import StockLocation
from ledger.models import StockEvent, StockLevel
from tests.factories import StockLocationFactory
from tests.support.api import AdminApi, error_fields, errors_of, results
from tests.support.stock import event, level, set_level
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


# --- POS: what each type does ----------------------------------------------------------------------------


def test_goods_received_raise_stock(pos, tenant):
    response = pos.post("stock-events", event("received", adjustment=5))
    assert response.status_code == 201, response.json()
    assert level(tenant) == 5


def test_a_single_event_object_is_accepted(pos, tenant):
    response = pos.post("stock-events", event())
    assert response.status_code == 201
    assert response.json()["status"] == "OK"
    assert len(response.json()["stock_events"]) == 1


def test_an_array_of_events_is_applied_in_order(pos, tenant):
    body = [event("received", adjustment=5), event("stock_count_reset", new_stock_value=2), event(adjustment=1)]
    assert pos.post("stock-events", body).status_code == 201
    assert level(tenant) == 3


def test_a_stock_count_sets_the_level_and_records_expected_and_difference(pos, tenant):
    set_level(tenant.stock_location, 14)
    response = pos.post("stock-events", event("stock_count_reset", new_stock_value=12, stock_count_id="c-9"))
    assert response.status_code == 201
    assert level(tenant) == 12
    stored = StockEvent.objects.get()
    assert (stored.stock_count_expected, stored.stock_count_diff, stored.stock_count_id) == (14, -2, "c-9")


def test_a_stock_count_ignores_posted_expected_and_difference(pos, tenant):
    set_level(tenant.stock_location, 4)
    body = event("stock_count_reset", new_stock_value=6, stock_count_expected=100, stock_count_diff=-94)
    assert pos.post("stock-events", body).status_code == 201
    stored = StockEvent.objects.get()
    assert (stored.stock_count_expected, stored.stock_count_diff) == (4, 2)


def test_a_stock_count_of_an_item_never_seen_expects_zero(pos, tenant):
    pos.post("stock-events", event("stock_count_reset", new_stock_value=3))
    stored = StockEvent.objects.get()
    assert (stored.stock_count_expected, stored.stock_count_diff) == (0, 3)


def test_an_external_reset_may_set_a_value(pos, tenant):
    set_level(tenant.stock_location, 4)
    pos.post("stock-events", event("external_reset", new_stock_value=10))
    assert level(tenant) == 10


def test_an_external_reset_may_adjust(pos, tenant):
    set_level(tenant.stock_location, 4)
    pos.post("stock-events", event("external_reset", new_stock_value=None, adjustment=-6))
    assert level(tenant) == -2


def test_a_variant_has_its_own_level(pos, tenant):
    pos.post("stock-events", [event(variant_id="m", adjustment=2), event(adjustment=7)])
    assert level(tenant, variant_id="m") == 2
    assert level(tenant) == 7


def test_fractional_quantities_are_exact(pos, tenant):
    # Floats here only write JSON numbers; the service parses them as Decimal (0.1 + 0.2 is exactly 0.3).
    pos.post("stock-events", [event(adjustment=0.1), event(adjustment=0.2)])
    assert level(tenant) == Decimal("0.3")


def test_the_posted_timestamp_is_kept_in_utc(pos, tenant):
    pos.post("stock-events", event(timestamp="2025-01-15T10:30:00+01:00"))
    assert StockEvent.objects.get().timestamp.isoformat() == "2025-01-15T09:30:00+00:00"


def test_a_timestamp_may_be_unix_seconds(pos, tenant):
    pos.post("stock-events", event(timestamp=1736933400.5))
    assert StockEvent.objects.get().timestamp.isoformat() == "2025-01-15T09:30:00.500000+00:00"


def test_the_answer_holds_the_events_and_the_resulting_levels(pos, tenant):
    set_level(tenant.stock_location, 1)
    body = pos.post("stock-events", event("stock_count_reset", variant_id=None, new_stock_value=4)).json()
    [recorded] = body["stock_events"]
    assert recorded["type"] == "stock_count_reset"
    assert recorded["stock_location_id"] == "shop-1"
    assert recorded["stock_count_diff"] == 3
    assert recorded["id"] == StockEvent.objects.get().pk
    assert [(s["product_id"], s["variant_id"], s["quantity"]) for s in body["stock_levels"]] == [("1001", None, 4)]


def test_another_stock_location_of_the_account_can_be_named(pos, tenant):
    warehouse = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="wh-1")
    pos.post("stock-events", event(stock_location_id="wh-1"))
    assert StockLevel.objects.get().stock_location == warehouse


# --- POS: what is refused ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sale", "return"])
def test_sale_and_return_events_are_refused_from_the_pos(pos, tenant, kind):
    response = pos.post("stock-events", [event(), event(kind, adjustment=-1)])
    assert response.status_code == 400
    assert errors_of(response) == {"[1].type": "not_allowed"}
    assert not StockEvent.objects.exists()


def test_every_bad_event_is_named_by_index_and_nothing_is_recorded(pos, tenant):
    body = [
        event(),
        event("stock_count_reset", new_stock_value=-1),
        event(adjustment="5"),
        event(),
        event("received", adjustment=None, new_stock_value=3),
    ]
    response = pos.post("stock-events", body)
    assert response.status_code == 400
    assert errors_of(response) == {
        "[1].new_stock_value": "out_of_range",
        "[2].adjustment": "invalid_type",
        "[4].new_stock_value": "not_allowed",
    }
    assert not StockEvent.objects.exists() and not StockLevel.objects.exists()


def test_errors_of_a_single_object_name_its_fields(pos, tenant):
    response = pos.post("stock-events", {"type": "received", "stock_location_id": "shop-1", "adjustment": 1})
    assert errors_of(response) == {"product_id": "required"}


def test_an_unknown_stock_location_is_refused_and_nothing_is_recorded(pos, tenant):
    response = pos.post("stock-events", [event(), event(stock_location_id="nowhere")])
    assert response.status_code == 400
    assert errors_of(response) == {"[1].stock_location_id": "unknown"}
    assert not StockEvent.objects.exists()


def test_a_stock_location_of_another_account_is_unknown(pos, tenant, other_tenant):
    StockLocationFactory(account=other_tenant.account, market=other_tenant.market, identifier="their-shop")
    response = pos.post("stock-events", event(stock_location_id="their-shop"))
    assert errors_of(response) == {"stock_location_id": "unknown"}


def test_both_adjustment_and_new_stock_value_are_refused(pos, tenant):
    response = pos.post("stock-events", event("external_reset", adjustment=1, new_stock_value=1))
    assert errors_of(response) == {"adjustment": "exactly_one"}


def test_neither_adjustment_nor_new_stock_value_is_refused(pos, tenant):
    response = pos.post("stock-events", event("external_reset", new_stock_value=None))
    assert errors_of(response) == {"adjustment": "exactly_one"}


@pytest.mark.parametrize("adjustment", [0, -3])
def test_goods_received_must_be_positive(pos, tenant, adjustment):
    assert errors_of(pos.post("stock-events", event(adjustment=adjustment))) == {"adjustment": "out_of_range"}


def test_a_stock_count_needs_a_stock_count_id(pos, tenant):
    response = pos.post("stock-events", event("stock_count_reset", stock_count_id=None))
    assert errors_of(response) == {"stock_count_id": "required"}


def test_a_stock_count_takes_no_adjustment(pos, tenant):
    response = pos.post("stock-events", event("stock_count_reset", new_stock_value=None, adjustment=2))
    assert errors_of(response) == {"adjustment": "not_allowed"}


def test_an_external_adjustment_of_zero_is_refused(pos, tenant):
    response = pos.post("stock-events", event("external_reset", new_stock_value=None, adjustment=0))
    assert errors_of(response) == {"adjustment": "out_of_range"}


def test_more_than_six_decimals_are_refused(pos, tenant):
    response = pos.post("stock-events", event(adjustment=1e-7))
    assert errors_of(response) == {"adjustment": "invalid_number"}


@pytest.mark.parametrize("timestamp", ["2025-01-15T09:30:00", "yesterday", -1, True, 10**12, {"at": 1}], ids=str)
def test_a_bad_timestamp_is_refused(pos, tenant, timestamp):
    response = pos.post("stock-events", event(timestamp=timestamp))
    assert response.status_code == 400
    assert set(errors_of(response)) == {"timestamp"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("product_id", 1001), ("product_id", ""), ("variant_id", ["m"]), ("stock_location_id", None), ("type", "lost")],
)
def test_wrong_values_are_refused_by_field(pos, tenant, field, value):
    body = event()
    body[field] = value
    response = pos.post("stock-events", body)
    assert response.status_code == 400
    assert field in errors_of(response)


def test_unknown_fields_are_ignored(pos, tenant):
    assert pos.post("stock-events", event(colour="red")).status_code == 201


def test_unicode_identifiers_are_kept(pos, tenant):
    pos.post("stock-events", event(product_id="kaffe-æøå-☕", variant_id="größe-m"))
    assert StockLevel.objects.get().product_id == "kaffe-æøå-☕"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ('[{"type": "received", "product_id": ', "invalid_json"),
        ("", "empty"),
        ("[]", "empty"),
        ('"received"', "invalid_type"),
        ("[1, 2]", "invalid_type"),
    ],
)
def test_unreadable_bodies_are_refused_without_a_500(pos, tenant, raw, code):
    response = pos.post("stock-events", raw)
    assert response.status_code == 400
    assert code in {e["code"] for e in response.json()["errors"]}


def test_more_than_1000_events_are_refused(pos, tenant):
    response = pos.post("stock-events", [event()] * 1001)
    assert response.status_code == 413
    assert not StockEvent.objects.exists()


def test_an_admin_key_cannot_post_stock_events(client, tenant):
    response = client.post(
        f"/api/v1/pos/stock-events?{tenant.query(tenant.admin_key)}", event(), content_type="application/json"
    )
    assert response.status_code == 403


# --- Read API ------------------------------------------------------------------------------------------------


@pytest.fixture
def stocked(tenant: Tenant) -> StockLocation:
    warehouse = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="wh-1")
    set_level(tenant.stock_location, 3, "1001")
    set_level(tenant.stock_location, 1, "1001", "m")
    set_level(tenant.stock_location, -2, "2002")
    set_level(warehouse, 40, "1001")
    return warehouse


def test_stock_lists_every_level_by_location_product_and_variant(api, stocked):
    rows = [(r["stock_location"], r["product_id"], r["variant_id"], r["quantity"]) for r in results(api.get("stock"))]
    assert rows == [
        ("shop-1", "1001", None, 3),
        ("shop-1", "1001", "m", 1),
        ("shop-1", "2002", None, -2),
        ("wh-1", "1001", None, 40),
    ]


def test_stock_filters_by_stock_location_and_product(api, stocked):
    rows = results(api.get("stock", stock_location="wh-1", product_id="1001"))
    assert [(r["stock_location"], r["quantity"]) for r in rows] == [("wh-1", 40)]


def test_stock_filters_by_variant(api, stocked):
    assert [r["quantity"] for r in results(api.get("stock", variant_id="m"))] == [1]


def test_stock_is_paginated(api, stocked):
    body = api.get("stock", limit=2).json()
    assert body["count"] == 4 and len(body["results"]) == 2 and body["next"]


def test_stock_of_another_account_is_not_listed_or_retrievable(api, stocked, other_tenant):
    theirs = StockLocationFactory(account=other_tenant.account, market=other_tenant.market, identifier="x")
    set_level(theirs, 9, "1001")
    assert all(r["stock_location"] != "x" for r in results(api.get("stock")))
    other = StockLevel.objects.get(stock_location=theirs)
    assert api.get(f"stock/{other.pk}").status_code == 404


def test_a_stock_level_is_retrieved_by_id(api, stocked, tenant):
    mine = StockLevel.objects.get(stock_location=tenant.stock_location, product_id="2002")
    assert api.get(f"stock/{mine.pk}").json()["quantity"] == -2


def test_an_unknown_stock_location_filter_lists_nothing(api, stocked):
    assert results(api.get("stock", stock_location="nowhere")) == []


def test_the_stock_api_needs_the_admin_scope(client, tenant):
    assert client.get(f"/api/v1/stock/?{tenant.query(tenant.pos_key)}").status_code == 403


def test_stock_events_are_listed_newest_first_and_filtered(api: AdminApi, pos, tenant):
    pos.post("stock-events", [event(adjustment=2), event("stock_count_reset", product_id="2002")])
    assert [r["type"] for r in results(api.get("stock-events"))] == ["stock_count_reset", "received"]
    assert [r["product_id"] for r in results(api.get("stock-events", type="received"))] == ["1001"]
    assert [r["type"] for r in results(api.get("stock-events", product_id="2002"))] == ["stock_count_reset"]
    assert results(api.get("stock-events", sale_id="sale-1")) == []


def test_a_stock_event_shows_its_stock_count_figures(api, pos, tenant):
    pos.post("stock-events", event("stock_count_reset", new_stock_value=3, stock_count_id="c-1"))
    [row] = results(api.get("stock-events"))
    assert row["new_stock_value"] == 3 and row["adjustment"] is None
    assert (row["stock_count_id"], row["stock_count_expected"], row["stock_count_diff"]) == ("c-1", 0, 3)
    assert row["stock_location"] == "shop-1" and row["sale_id"] is None


def test_an_unknown_event_type_filter_is_a_400(api, tenant):
    response = api.get("stock-events", type="lost")
    assert response.status_code == 400
    assert "type" in error_fields(response)
