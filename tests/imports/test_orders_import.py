"""POST /imports/incoming_orders and /imports/external_orders (spec: Endpoints A, Errors, Limits)."""

from __future__ import annotations

import pytest

from imports.models import ImportItem, ImportKind, ImportStatus
from orders.models import ExternalOrder, HandlingType, IncomingOrder, OrderState
from tests.factories import StockLocationFactory
from tests.support.imports import materialise_pending, order, post
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.django_db


def test_all_valid_orders_answer_200_ok_with_the_count(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [order("a"), order("b")]}, stock_location="shop-1")
    assert r.status_code == 200
    assert r.json() == {"status": "OK", "message": "Import of 2 order(s) initiated"}


def test_orders_are_queued_not_created_by_the_request(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert IncomingOrder.objects.count() == 0
    item = ImportItem.objects.get()
    assert (item.status, item.kind, item.identifier) == (ImportStatus.PENDING, ImportKind.INCOMING_ORDER, "a")
    assert item.integration == tenant.integration


def test_materialising_creates_the_order_in_state_created_and_logs_success(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert materialise_pending(tenant) == 1
    created = IncomingOrder.objects.get()
    assert created.order_identifier == "a"
    assert created.stock_location == tenant.stock_location
    assert created.state == OrderState.CREATED
    assert [c.state for c in created.state_changes.all()] == [OrderState.CREATED]
    item = ImportItem.objects.get()
    assert item.status == ImportStatus.SUCCESS
    assert item.message == "incoming order created"
    assert item.processed_at is not None


def test_materialising_twice_creates_nothing_twice(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    ids = list(ImportItem.objects.values_list("id", flat=True))
    from imports import services

    assert services.materialise_items(account_id=tenant.account.pk, item_ids=ids) == 1
    assert services.materialise_items(account_id=tenant.account.pk, item_ids=ids) == 0
    assert IncomingOrder.objects.count() == 1


def test_prices_keep_their_exact_decimal_value(tenant, client):
    body = order("a")
    body["basket"]["line_items"][0]["price"] = 0.1
    post(client, tenant, "incoming_orders", {"orders": [body]}, stock_location="shop-1")
    materialise_pending(tenant)
    from decimal import Decimal

    assert IncomingOrder.objects.get().basket["line_items"][0]["price"] == Decimal("0.1")


@pytest.mark.parametrize(
    ("extra", "handling"),
    [
        ({}, HandlingType.RESERVE_AND_COLLECT),
        ({"payment": {"reference": "psp-1"}}, HandlingType.CLICK_AND_COLLECT),
        (
            {"payment": {"reference": "psp-1"}, "shipping": {"address": {"city": "Aarhus"}}},
            HandlingType.SHIP_FROM_STORE,
        ),
    ],
)
def test_handling_type_is_derived_from_payment_and_shipping(tenant, client, extra, handling):
    post(client, tenant, "incoming_orders", {"orders": [order("a", **extra)]}, stock_location="shop-1")
    materialise_pending(tenant)
    assert IncomingOrder.objects.get().handling_type == handling


def test_shipping_without_payment_is_refused_naming_the_field(tenant, client):
    r = post(
        client,
        tenant,
        "incoming_orders",
        {"orders": [order("a", shipping={"method_id": "gls"})]},
        stock_location="shop-1",
    )
    assert r.status_code == 400
    [failed] = r.json()["failed"]
    assert failed["index"] == 0 and failed["id"] == "a"
    assert failed["errors"][0]["field"] == "shipping"
    assert failed["errors"][0]["code"] == "shipping_without_payment"


def test_some_bad_items_queue_the_good_ones_and_answer_207(tenant, client):
    bad = order("b")
    bad["basket"]["line_items"][0]["price"] = -5
    r = post(client, tenant, "incoming_orders", {"orders": [order("a"), bad, order("c")]}, stock_location="shop-1")
    assert r.status_code == 207
    body = r.json()
    assert body["status"] == "PARTIAL"
    assert body["failed"] == [
        {
            "index": 1,
            "id": "b",
            "errors": [{"field": "basket.line_items[0].price", "message": "must be positive", "code": "out_of_range"}],
        }
    ]
    materialise_pending(tenant)
    assert set(IncomingOrder.objects.values_list("order_identifier", flat=True)) == {"a", "c"}
    assert ImportItem.objects.get(identifier="b").status == ImportStatus.REJECTED


def test_no_valid_item_answers_400_error_and_queues_nothing(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [{"basket": {}}]}, stock_location="shop-1")
    assert r.status_code == 400
    body = r.json()
    assert body["status"] == "ERROR"
    fields = {e["field"] for e in body["failed"][0]["errors"]}
    assert fields == {"order_identifier", "basket.currency", "basket.line_items"}
    assert body["failed"][0]["id"] is None
    assert not ImportItem.objects.filter(status=ImportStatus.PENDING).exists()


def test_an_identifier_twice_in_one_batch_queues_the_first_only(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [order("a"), order("a")]}, stock_location="shop-1")
    assert r.status_code == 207
    [failed] = r.json()["failed"]
    assert (failed["index"], failed["errors"][0]["code"]) == (1, "duplicate")


def test_reposting_the_same_batch_creates_nothing_twice(tenant, client):
    batch = {"orders": [order("a"), order("b")]}
    post(client, tenant, "incoming_orders", batch, stock_location="shop-1")
    materialise_pending(tenant)
    r = post(client, tenant, "incoming_orders", batch, stock_location="shop-1")
    assert r.status_code == 400
    assert {e["errors"][0]["code"] for e in r.json()["failed"]} == {"duplicate"}
    materialise_pending(tenant)
    assert IncomingOrder.objects.count() == 2


def test_an_identifier_still_pending_in_the_queue_is_a_duplicate(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert r.status_code == 400
    assert r.json()["failed"][0]["errors"][0]["code"] == "duplicate"


def test_a_duplicate_that_slips_past_the_request_fails_in_the_import_log(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    # A concurrent request queued the same identifier before either was materialised.
    first = ImportItem.objects.get()
    ImportItem.objects.create(
        account=tenant.account,
        integration=tenant.integration,
        kind=first.kind,
        request_id=first.request_id,
        index=1,
        identifier="a",
        stock_location=tenant.stock_location,
        payload=first.payload,
    )
    materialise_pending(tenant)
    assert IncomingOrder.objects.count() == 1
    statuses = sorted(ImportItem.objects.values_list("status", "message"))
    assert statuses[0][0] == ImportStatus.FAILURE and "duplicate" in statuses[0][1]
    assert statuses[1][0] == ImportStatus.SUCCESS


def test_the_same_identifier_on_another_stock_location_is_not_a_duplicate(tenant, client):
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-2")
    assert r.status_code == 200
    materialise_pending(tenant)
    assert IncomingOrder.objects.count() == 2


def test_unknown_stock_location_is_refused(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="nowhere")
    assert r.status_code == 400
    assert r.json()["errors"] == [
        {"field": "stock_location", "message": "unknown stock location 'nowhere'", "code": "unknown"}
    ]


def test_missing_stock_location_is_refused(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [order("a")]})
    assert r.status_code == 400
    assert r.json()["errors"][0]["field"] == "stock_location"


def test_a_stock_location_of_another_account_is_unknown(tenant, client):
    make_tenant("globex")  # also has a shop-1, but for this caller only its own shop-1 counts
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="mine")
    other = StockLocationFactory(identifier="theirs")
    r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location=other.identifier)
    assert r.status_code == 400


def test_external_orders_are_queued_and_materialised(tenant, client):
    body = {"order_identifier": "x1", "basket": order()["basket"], "customer": {"customer_identifier": "c1"}}
    r = post(client, tenant, "external_orders", {"external_orders": [body]}, stock_location="shop-1")
    assert r.status_code == 200
    assert r.json()["message"] == "Import of 1 external order(s) initiated"
    materialise_pending(tenant)
    assert ExternalOrder.objects.get().customer == {"customer_identifier": "c1"}


def test_external_order_customer_requires_an_identifier(tenant, client):
    body = {"order_identifier": "x1", "basket": order()["basket"], "customer": {"name": "Jane"}}
    r = post(client, tenant, "external_orders", {"external_orders": [body]}, stock_location="shop-1")
    assert r.json()["failed"][0]["errors"][0]["field"] == "customer.customer_identifier"


def test_incoming_and_external_identifiers_are_separate(tenant, client):
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    r = post(client, tenant, "external_orders", {"external_orders": [order("a")]}, stock_location="shop-1")
    assert r.status_code == 200


def test_orders_key_is_required(tenant, client):
    r = post(client, tenant, "incoming_orders", {"external_orders": [order()]}, stock_location="shop-1")
    assert r.status_code == 400
    assert r.json()["errors"][0] == {"field": "orders", "message": "'orders' is required", "code": "required"}


def test_empty_orders_array_is_refused(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": []}, stock_location="shop-1")
    assert r.status_code == 400
    assert r.json()["errors"][0]["code"] == "empty"


def test_unknown_fields_are_ignored_and_reported_as_warnings(tenant, client):
    r = post(client, tenant, "incoming_orders", {"orders": [order("a", gift_wrap=True)]}, stock_location="shop-1")
    assert r.status_code == 200
    assert r.json()["warnings"] == [
        {"index": 0, "field": "gift_wrap", "message": "unknown field, ignored", "code": "unknown_field"}
    ]
    assert "gift_wrap" not in ImportItem.objects.get().payload


def test_a_trailing_slash_is_accepted(tenant, client):
    r = post(client, tenant, "incoming_orders/", {"orders": [order("a")]}, stock_location="shop-1")
    assert r.status_code == 200


# Spec: the customer's name, phone_number and email and a line's variant_identifier and barcode are optional
# strings; a blank one is kept as sent, like the shipping address's blanks.
BLANK_CUSTOMER = {"customer_identifier": "c1", "name": "", "phone_number": "", "email": ""}


CUSTOMER_IDENTIFIER = "customer.customer_identifier"


def blank_basket() -> dict[str, object]:
    basket = order()["basket"]
    basket["line_items"][0].update(variant_identifier="", barcode=" ")
    return basket


def test_an_incoming_order_with_blank_optional_texts_is_materialised_and_shown_as_sent(tenant, client, api):
    body = order("a", customer=BLANK_CUSTOMER, basket=blank_basket())
    r = post(client, tenant, "incoming_orders", {"orders": [body]}, stock_location="shop-1")
    assert r.status_code == 200, r.json()
    assert materialise_pending(tenant) == 1

    created = IncomingOrder.objects.get()
    assert created.customer == BLANK_CUSTOMER
    line = created.basket["line_items"][0]
    assert (line["variant_identifier"], line["barcode"]) == ("", " ")
    shown = api.get(f"incoming-orders/{created.pk}").json()
    assert (shown["customer"], shown["basket"]["line_items"][0]["barcode"]) == (BLANK_CUSTOMER, " ")


def test_an_external_order_with_blank_optional_texts_is_materialised(tenant, client):
    body = {"order_identifier": "x1", "basket": blank_basket(), "customer": {"customer_identifier": "c1", "name": ""}}
    r = post(client, tenant, "external_orders", {"external_orders": [body]}, stock_location="shop-1")
    assert r.status_code == 200, r.json()
    assert materialise_pending(tenant) == 1
    assert ExternalOrder.objects.get().customer == {"customer_identifier": "c1", "name": ""}


@pytest.mark.parametrize(
    ("path", "change", "field"),
    [
        ("incoming_orders", {"order_identifier": " "}, "order_identifier"),
        ("incoming_orders", {"customer": {**BLANK_CUSTOMER, "customer_identifier": ""}}, CUSTOMER_IDENTIFIER),
        ("external_orders", {"customer": {"customer_identifier": "", "name": ""}}, CUSTOMER_IDENTIFIER),
    ],
)
def test_a_blank_identifier_is_still_refused(tenant, client, path, change, field):
    body = {**order("a", basket=blank_basket()), **change}
    r = post(client, tenant, path, {path.removeprefix("incoming_"): [body]}, stock_location="shop-1")
    assert r.status_code == 400
    assert [(e["field"], e["code"]) for e in r.json()["failed"][0]["errors"]] == [(field, "blank")]
