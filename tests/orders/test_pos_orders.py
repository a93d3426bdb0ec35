"""The POS API of orders: a shop moves its incoming orders and places outgoing orders (spec: Order states;
Order, general model; Cashier; Events, Incoming Order State Change Events and Outgoing Orders)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
from rest_framework.response import Response

from accounts.models import StockLocation
from core.errors import Conflict
from exports.models import ExportItem, ExportQueue
from orders import services as order_services
from orders.models import IncomingOrder, OrderState, OrderStateChange, OutgoingOrder
from tests.factories import CashierFactory, IncomingOrderFactory, MarketFactory, StockLocationFactory
from tests.support.api import AdminApi, PosApi, error_fields
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


# --- Factories of this module ------------------------------------------------------------------------------


def basket(**overrides: Any) -> dict[str, Any]:
    """A full sale.summary basket whose totals add up: 2 x 99.95 with 25 % VAT included."""
    body: dict[str, Any] = {
        "base_price": 199.9,
        "sales_tax_amount": 0,
        "sub_total": 199.9,
        "total": 199.9,
        "total_discounts": 0,
        "total_tax_amount": 39.98,
        "vat_amount": 39.98,
        "is_return": False,
        "line_items": [
            {
                "line_item_id": "li-1",
                "id": "tshirt",
                "name": "T-shirt",
                "quantity": 2,
                "base_price": 199.9,
                "retail_price": 99.95,
                "sales_tax_amount": 0,
                "sub_total": 199.9,
                "total": 199.9,
                "total_tax_amount": 39.98,
                "vat_amount": 39.98,
            }
        ],
        "taxes": [{"rate": 25, "amount": 39.98, "type": "vat", "name": "VAT"}],
    }
    body.update(overrides)
    return body


def outgoing(destination: str = "external", identifier: str = "shop-1-0001", **order: Any) -> dict[str, Any]:
    return {
        "stock_location": "shop-1",
        "destination": destination,
        "order": {"order_identifier": identifier, "basket": basket(), **order},
    }


def incoming_order(tenant: Tenant, identifier: str = "WEB-1", **fields: Any) -> IncomingOrder:
    """An imported incoming order with its first history entry, as materialised imports leave it."""
    fields.setdefault("stock_location", tenant.stock_location)
    order = IncomingOrderFactory(account=tenant.account, order_identifier=identifier, **fields)
    OrderStateChange.objects.create(
        account=tenant.account, incoming_order=order, state=order.state, source=OrderStateChange.Source.IMPORT
    )
    return order


def queue(tenant: Tenant, entity_type: str) -> ExportQueue:
    # Hourly: items wait for their window, so nothing is handed to a worker from a test.
    return ExportQueue.objects.create(
        account=tenant.account,
        name=entity_type,
        entity_type=entity_type,
        trigger="hourly",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )


def shop(tenant: Tenant, identifier: str = "shop-2", market: Any = None) -> StockLocation:
    return StockLocationFactory(account=tenant.account, market=market or tenant.market, identifier=identifier)


def move(pos: PosApi, body: Any, location: str = "shop-1", identifier: str = "WEB-1") -> Response:
    return pos.post(f"incoming-orders/{location}/{identifier}/state", body)


def only_error(response: Response) -> dict[str, str]:
    (error,) = response.json()["errors"]
    return error


# --- Incoming order state changes ------------------------------------------------------------------------


def test_a_state_change_moves_the_order_and_answers_it_with_its_history(pos: PosApi, tenant: Tenant) -> None:
    order = incoming_order(tenant)

    response = move(pos, {"state": "processing", "comment": "Picking"})

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["id"], body["state"], body["last_change_at"]) == (order.pk, "processing", body["last_change_at"])
    assert [(h["previous_state"], h["state"], h["comment"], h["source"]) for h in body["history"]] == [
        (None, "created", "", "import"),
        ("created", "processing", "Picking", "pos"),
    ]
    order.refresh_from_db()
    assert order.state == OrderState.PROCESSING
    assert body["last_change_at"] == order.last_change_at.isoformat().replace("+00:00", "Z")


def test_the_path_accepts_a_trailing_slash(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = pos.post("incoming-orders/shop-1/WEB-1/state/", {"state": "ready"})

    assert response.status_code == 200
    assert response.json()["state"] == "ready"


@pytest.mark.parametrize(
    ("identifier", "in_path"),
    [
        ("ÆØÅ bestilling #7", "%C3%86%C3%98%C3%85%20bestilling%20%237"),
        ("web.1001:a", "web.1001:a"),
        ("a/b", "a%2Fb"),
        ("state", "state"),
    ],
)
def test_an_order_identifier_with_unicode_dots_or_reserved_characters_is_found(
    pos: PosApi, tenant: Tenant, identifier: str, in_path: str
) -> None:
    shop(tenant, "shop.north")
    incoming_order(tenant, identifier, stock_location=StockLocation.objects.get(identifier="shop.north"))

    response = move(pos, {"state": "processing"}, location="shop.north", identifier=in_path)

    assert response.status_code == 200, response.json()
    assert response.json()["order_identifier"] == identifier


def test_a_cashier_object_is_recorded_on_the_change(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)
    cashier = {"identifier": "c-1", "display_name": "AB", "image_url": "https://cdn.example.com/ab.png"}

    response = move(pos, {"state": "processing", "cashier": cashier})

    assert response.json()["history"][-1]["cashier"] == cashier


def test_a_cashier_identifier_is_recorded_as_the_cashier_object(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)
    CashierFactory(account=tenant.account, identifier="anne", display_name="AB", full_name="Anne Berg")

    response = move(pos, {"state": "processing", "cashier": "anne"})

    assert response.status_code == 200
    assert OrderStateChange.objects.latest("id").cashier == {
        "identifier": "anne",
        "display_name": "AB",
        "full_name": "Anne Berg",
    }


def test_an_unknown_cashier_identifier_is_refused(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, {"state": "processing", "cashier": "nobody"})

    assert response.status_code == 400
    assert only_error(response)["field"] == "cashier"
    assert IncomingOrder.objects.get().state == OrderState.CREATED


def test_a_cashier_of_another_account_is_unknown(pos: PosApi, tenant: Tenant, other_tenant: Tenant) -> None:
    incoming_order(tenant)
    CashierFactory(account=other_tenant.account, identifier="theirs")

    response = move(pos, {"state": "processing", "cashier": "theirs"})

    assert response.status_code == 400
    assert error_fields(response) == {"cashier"}


def test_a_cashier_object_without_its_required_fields_is_refused(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, {"state": "processing", "cashier": {"full_name": "Anne"}})

    assert response.status_code == 400
    assert error_fields(response) == {"cashier.display_name", "cashier.identifier"}


def test_an_unknown_stock_location_is_a_json_404(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, {"state": "processing"}, location="no-such-shop")

    assert response.status_code == 404
    assert response.json()["status"] == "ERROR"
    assert error_fields(response) == {"stock_location"}


def test_an_unknown_order_is_a_json_404(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, {"state": "processing"}, identifier="WEB-404")

    assert response.status_code == 404
    assert error_fields(response) == {"order_identifier"}


def test_the_order_of_another_account_is_a_404(pos: PosApi, tenant: Tenant, other_tenant: Tenant) -> None:
    incoming_order(other_tenant)  # the same shop and order identifiers, in the other account

    response = move(pos, {"state": "processing"})

    assert response.status_code == 404
    assert IncomingOrder.objects.get().state == OrderState.CREATED


def test_a_refused_transition_is_a_409_naming_state(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant, state=OrderState.COMPLETED)

    response = move(pos, {"state": "processing"})

    assert response.status_code == 409
    assert error_fields(response) == {"state"}
    assert OrderStateChange.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"state"}),
        ({"state": None}, {"state"}),
        ({"state": "shipped"}, {"state"}),
        ({"state": 3}, {"state"}),
        ({"state": "ready", "comment": ["x"]}, {"comment"}),
        ({"state": "ready", "cashier": 7}, {"cashier"}),
        ([{"state": "ready"}], {"body"}),
        ("null", {"body"}),
    ],
)
def test_an_invalid_body_is_a_400_naming_the_field(pos: PosApi, tenant: Tenant, body: Any, fields: set[str]) -> None:
    incoming_order(tenant)

    response = move(pos, body)

    assert response.status_code == 400
    assert error_fields(response) == fields


def test_truncated_json_is_a_400(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, '{"state": "rea')

    assert response.status_code == 400
    assert error_fields(response) == {"body"}


def test_unknown_fields_are_ignored(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant)

    response = move(pos, {"state": "ready", "priority": "high", "comment": "Klar til afhentning ✓"})

    assert response.status_code == 200
    assert response.json()["history"][-1]["comment"] == "Klar til afhentning ✓"


def test_a_key_without_the_pos_scope_is_refused(api: AdminApi, tenant: Tenant) -> None:
    incoming_order(tenant)
    url = f"/api/v1/pos/incoming-orders/shop-1/WEB-1/state?{tenant.query(tenant.admin_key)}"

    response = api.client.post(url, {"state": "ready"}, format="json")

    assert response.status_code == 403
    assert IncomingOrder.objects.get().state == OrderState.CREATED


def test_each_change_is_an_incoming_order_state_change_event(pos: PosApi, tenant: Tenant) -> None:
    queue(tenant, "incoming_order_state_changes")
    incoming_order(tenant)

    move(pos, {"state": "ready", "comment": "Packed", "cashier": {"identifier": "c-1", "display_name": "AB"}})

    item = ExportItem.objects.get()
    change = OrderStateChange.objects.latest("id")
    assert (item.object_id, item.element_key) == (change.pk, f"WEB-1:{change.pk}")


@pytest.mark.django_db(transaction=True)
def test_the_change_and_its_export_item_commit_together_outside_any_transaction(tenant: Tenant) -> None:
    # No test transaction around this one: the service must open its own around the change and the outbox.
    queue(tenant, "incoming_order_state_changes")
    order = incoming_order(tenant)

    order_services.change_incoming_order_state(
        account=tenant.account, order=order, move=order_services.StateMove("ready")
    )

    assert ExportItem.objects.get().object_id == OrderStateChange.objects.latest("id").pk


@pytest.mark.django_db(transaction=True)
def test_a_change_whose_export_fails_is_not_kept(tenant: Tenant) -> None:
    order = incoming_order(tenant)

    with (
        mock.patch("exports.services.enqueueing.enqueue", side_effect=RuntimeError("outbox down")),
        pytest.raises(RuntimeError),
    ):
        order_services.change_incoming_order_state(
            account=tenant.account, order=order, move=order_services.StateMove("ready")
        )

    order.refresh_from_db()
    assert order.state == OrderState.CREATED
    assert OrderStateChange.objects.count() == 1


# --- Outgoing orders ---------------------------------------------------------------------------------------


def test_an_external_order_is_created_and_exported(pos: PosApi, tenant: Tenant) -> None:
    queue(tenant, "outgoing_orders")
    queue(tenant, "incoming_order_state_changes")

    response = pos.post("outgoing-orders", outgoing())

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["order_identifier"], body["stock_location"], body["destination"]) == ("shop-1-0001", "shop-1", None)
    assert (body["incoming_order"], body["state"], body["handling_type"]) == (None, "created", "reserve_and_collect")
    assert [(h["state"], h["source"]) for h in body["history"]] == [("created", "pos")]
    item = ExportItem.objects.get()
    assert (item.entity_type, item.object_id) == ("outgoing_orders", body["id"])
    assert not IncomingOrder.objects.exists()


def test_the_outgoing_orders_path_accepts_a_trailing_slash(pos: PosApi, tenant: Tenant) -> None:
    assert pos.post("outgoing-orders/", outgoing()).status_code == 201


def test_amounts_are_kept_as_exact_decimals(pos: PosApi, tenant: Tenant) -> None:
    pos.post("outgoing-orders", outgoing())

    stored = OutgoingOrder.objects.get().basket
    assert stored["total"] == Decimal("199.90") and isinstance(stored["total"], Decimal)
    assert stored["line_items"][0]["retail_price"] == Decimal("99.95")


def test_an_order_to_another_shop_is_received_there_as_an_incoming_order(pos: PosApi, tenant: Tenant) -> None:
    se = MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    shop(tenant, "shop-se", market=se)
    customer = {"customer_identifier": "C-42", "name": "Jane", "email": "jane@example.com", "phone_number": "+45 1"}

    response = pos.post("outgoing-orders", outgoing("shop-se", customer=customer, payment={"reference": "PAY-1"}))

    assert response.status_code == 201, response.json()
    received = IncomingOrder.objects.get()
    assert response.json()["incoming_order"] == {
        "id": received.pk,
        "stock_location": "shop-se",
        "order_identifier": "shop-1-0001",
    }
    assert response.json()["destination"] == "shop-se"
    assert (received.order_identifier, received.currency, received.handling_type) == (
        "shop-1-0001",
        "DKK",  # the currency of the placing shop's market: the basket's amounts are in it
        "click_and_collect",
    )
    assert received.basket == OutgoingOrder.objects.get().basket  # the full sale.summary, as placed
    assert received.basket["vat_amount"] == Decimal("39.98")
    assert (received.customer, received.payment, received.shipping) == (customer, {"reference": "PAY-1"}, None)
    assert received.outgoing_order_id == response.json()["id"]
    assert [(c.state, c.source) for c in received.state_changes.all()] == [("created", "system")]


def test_an_internal_order_is_an_incoming_order_event_and_not_an_outgoing_order_export(
    pos: PosApi, tenant: Tenant
) -> None:
    queue(tenant, "outgoing_orders")
    queue(tenant, "incoming_order_state_changes")
    shop(tenant)

    pos.post("outgoing-orders", outgoing("shop-2"))

    item = ExportItem.objects.get()
    change = OrderStateChange.objects.get(incoming_order__isnull=False)
    assert (item.entity_type, item.object_id, item.element_key) == (
        "incoming_order_state_changes",
        change.pk,
        f"shop-1-0001:{change.pk}",
    )


def test_an_internal_order_is_written_whole_or_not_at_all(tenant: Tenant) -> None:
    destination = shop(tenant)

    with (
        mock.patch("exports.services.enqueueing.enqueue", side_effect=RuntimeError("outbox down")),
        pytest.raises(RuntimeError),
    ):
        order_services.create_outgoing_order(
            account=tenant.account,
            stock_location=tenant.stock_location,
            destination=destination,
            order={"order_identifier": "o-1", "basket": basket()},
        )

    assert not OutgoingOrder.objects.exists()
    assert not IncomingOrder.objects.exists()
    assert not OrderStateChange.objects.exists()


@pytest.mark.parametrize(
    ("extra", "handling_type"),
    [
        ({}, "reserve_and_collect"),
        ({"payment": {"reference": "PAY-1"}}, "click_and_collect"),
        (
            {"payment": {"reference": "PAY-1"}, "shipping": {"address": {"street": "Nørregade 1", "city": "Kbh"}}},
            "ship_from_store",
        ),
    ],
)
def test_the_handling_type_follows_from_payment_and_shipping(
    pos: PosApi, tenant: Tenant, extra: dict[str, Any], handling_type: str
) -> None:
    shop(tenant)

    response = pos.post("outgoing-orders", outgoing("shop-2", **extra))

    assert response.json()["handling_type"] == handling_type
    assert IncomingOrder.objects.get().handling_type == handling_type


def test_the_read_api_shows_the_handling_type_and_the_receiving_order(
    pos: PosApi, api: AdminApi, tenant: Tenant
) -> None:
    shop(tenant)
    placed = pos.post("outgoing-orders", outgoing("shop-2", payment={"reference": "PAY-1"})).json()

    shown = api.get(f"outgoing-orders/{placed['id']}").json()

    assert shown["handling_type"] == "click_and_collect"
    assert shown["incoming_order"]["stock_location"] == "shop-2"


def test_shipping_without_payment_is_refused(pos: PosApi, tenant: Tenant) -> None:
    response = pos.post("outgoing-orders", outgoing(shipping={"address": {"city": "Aarhus"}}))

    assert response.status_code == 400
    assert only_error(response)["code"] == "shipping_without_payment"
    assert error_fields(response) == {"order.shipping"}
    assert not OutgoingOrder.objects.exists()


def test_shipping_needs_an_address(pos: PosApi, tenant: Tenant) -> None:
    body = outgoing(payment={"reference": "P"}, shipping={"method_id": "gls"})

    response = pos.post("outgoing-orders", body)

    assert response.status_code == 400
    assert error_fields(response) == {"order.shipping.address"}


def test_an_order_to_the_same_shop_is_refused(pos: PosApi, tenant: Tenant) -> None:
    response = pos.post("outgoing-orders", outgoing("shop-1"))

    assert response.status_code == 400
    assert error_fields(response) == {"destination"}
    assert not OutgoingOrder.objects.exists()


@pytest.mark.parametrize("field", ["stock_location", "destination"])
def test_an_unknown_stock_location_is_refused(pos: PosApi, tenant: Tenant, field: str) -> None:
    body = outgoing("shop-1" if field == "stock_location" else "shop-2")
    body[field] = "no-such-shop"

    response = pos.post("outgoing-orders", body)

    assert response.status_code == 400
    assert error_fields(response) == {field}


def test_a_shop_of_another_account_is_no_destination(pos: PosApi, tenant: Tenant, other_tenant: Tenant) -> None:
    StockLocationFactory(account=other_tenant.account, market=other_tenant.market, identifier="shop-2")

    response = pos.post("outgoing-orders", outgoing("shop-2"))

    assert response.status_code == 400
    assert error_fields(response) == {"destination"}
    assert not IncomingOrder.objects.exists()


def test_an_order_identifier_used_by_the_placing_shop_is_a_409(pos: PosApi, tenant: Tenant) -> None:
    shop(tenant)
    assert pos.post("outgoing-orders", outgoing()).status_code == 201

    response = pos.post("outgoing-orders", outgoing("shop-2"))

    assert response.status_code == 409
    assert error_fields(response) == {"order.order_identifier"}
    assert (OutgoingOrder.objects.count(), IncomingOrder.objects.count()) == (1, 0)


def test_an_order_identifier_used_on_the_destination_is_a_409(pos: PosApi, tenant: Tenant) -> None:
    incoming_order(tenant, "shop-1-0001", stock_location=shop(tenant))

    response = pos.post("outgoing-orders", outgoing("shop-2"))

    assert response.status_code == 409
    assert error_fields(response) == {"order.order_identifier"}
    assert not OutgoingOrder.objects.exists()


def test_the_same_order_identifier_may_be_used_by_another_shop(pos: PosApi, tenant: Tenant) -> None:
    shop(tenant)
    assert pos.post("outgoing-orders", outgoing()).status_code == 201
    body = outgoing()
    body["stock_location"] = "shop-2"

    assert pos.post("outgoing-orders", body).status_code == 201


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"stock_location", "destination", "order"}),
        ({"stock_location": "shop-1", "destination": "external", "order": "o-1"}, {"order"}),
        ({**outgoing(), "destination": 2}, {"destination"}),
        (outgoing(basket=None), {"order.basket"}),
        (outgoing(basket={**basket(), "line_items": "none"}), {"order.basket.line_items"}),
        (outgoing(basket={**basket(), "total": "199.90"}), {"order.basket.total"}),
        (outgoing(identifier=""), {"order.order_identifier"}),
        (outgoing(payment={}), {"order.payment.reference"}),
        (outgoing(customer={"email": 5}), {"order.customer.email"}),
    ],
)
def test_an_invalid_outgoing_order_is_a_400_naming_the_field(
    pos: PosApi, tenant: Tenant, body: dict[str, Any], fields: set[str]
) -> None:
    response = pos.post("outgoing-orders", body)

    assert response.status_code == 400
    assert error_fields(response) == fields
    assert not OutgoingOrder.objects.exists()


def test_a_truncated_outgoing_order_is_a_400(pos: PosApi, tenant: Tenant) -> None:
    response = pos.post("outgoing-orders", '{"stock_location": "shop-1", "order": {')

    assert response.status_code == 400
    assert error_fields(response) == {"body"}


def test_unknown_fields_of_an_outgoing_order_are_ignored(pos: PosApi, tenant: Tenant) -> None:
    body = outgoing(identifier="Ordre ☕ 1", note="leave at door")
    body["priority"] = "high"

    response = pos.post("outgoing-orders", body)

    assert response.status_code == 201
    assert "note" not in OutgoingOrder.objects.get().basket
    assert response.json()["order_identifier"] == "Ordre ☕ 1"


# --- The two sides of an internal order -------------------------------------------------------------------


def place_internal(pos: PosApi, tenant: Tenant) -> tuple[OutgoingOrder, IncomingOrder]:
    shop(tenant)
    assert pos.post("outgoing-orders", outgoing("shop-2")).status_code == 201
    return OutgoingOrder.objects.get(), IncomingOrder.objects.get()


def test_the_receiving_shop_moves_the_placing_shops_order_too(pos: PosApi, tenant: Tenant) -> None:
    placed, _ = place_internal(pos, tenant)
    cashier = {"identifier": "c-1", "display_name": "AB"}

    response = move(pos, {"state": "ready", "comment": "Come get it", "cashier": cashier}, "shop-2", "shop-1-0001")

    assert response.status_code == 200
    placed.refresh_from_db()
    assert placed.state == OrderState.READY
    latest = placed.state_changes.latest("id")
    assert (latest.previous_state, latest.state, latest.comment, latest.cashier, latest.source) == (
        "created",
        "ready",
        "Come get it",
        cashier,
        "system",
    )


def test_a_refused_move_leaves_both_sides_unchanged(pos: PosApi, tenant: Tenant) -> None:
    placed, received = place_internal(pos, tenant)
    assert move(pos, {"state": "completed"}, "shop-2", "shop-1-0001").status_code == 200

    response = move(pos, {"state": "ready"}, "shop-2", "shop-1-0001")

    assert response.status_code == 409
    assert placed.state_changes.count() == received.state_changes.count() == 2


def test_an_import_cannot_move_an_order_placed_with_another_shop(pos: PosApi, tenant: Tenant) -> None:
    placed, _ = place_internal(pos, tenant)

    with pytest.raises(Conflict) as refused:
        order_services.change_outgoing_order_state(
            account=tenant.account,
            stock_location_id=tenant.stock_location.pk,
            order_identifier="shop-1-0001",
            move=order_services.StateMove("processing", source=OrderStateChange.Source.IMPORT),
        )

    assert refused.value.field == "state"
    assert "shop-2" in refused.value.message
    placed.refresh_from_db()
    assert placed.state == OrderState.CREATED


def test_an_import_still_moves_an_external_order(pos: PosApi, tenant: Tenant) -> None:
    pos.post("outgoing-orders", outgoing())

    order_services.change_outgoing_order_state(
        account=tenant.account,
        stock_location_id=tenant.stock_location.pk,
        order_identifier="shop-1-0001",
        move=order_services.StateMove("processing", source=OrderStateChange.Source.IMPORT),
    )

    assert OutgoingOrder.objects.get().state == OrderState.PROCESSING
