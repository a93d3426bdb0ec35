from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from orders.models import OrderState, OrderStateChange
from tests.factories import (
    ExternalOrderFactory,
    IncomingOrderFactory,
    OrderStateChangeFactory,
    OutgoingOrderFactory,
    StockLocationFactory,
)
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

ORDER_FACTORIES = {
    "incoming-orders": IncomingOrderFactory,
    "external-orders": ExternalOrderFactory,
    "outgoing-orders": OutgoingOrderFactory,
}


def _order(resource: str, tenant: Tenant, **fields: object) -> object:
    fields.setdefault("stock_location", tenant.stock_location)
    return ORDER_FACTORIES[resource](account=tenant.account, **fields)


def _identifiers(api: AdminApi, resource: str, **params: str) -> list[str]:
    return [o["order_identifier"] for o in results(api.get(resource, **params))]


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_list_is_newest_first(api: AdminApi, resource: str) -> None:
    for n in range(3):
        _order(resource, api.tenant, order_identifier=f"o-{n}")

    assert _identifiers(api, resource) == ["o-2", "o-1", "o-0"]


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_list_shows_only_the_orders_of_the_account(api: AdminApi, other_tenant: Tenant, resource: str) -> None:
    _order(resource, api.tenant, order_identifier="mine")
    _order(resource, other_tenant, order_identifier="theirs")

    assert _identifiers(api, resource) == ["mine"]


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_an_order_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, resource: str) -> None:
    theirs = _order(resource, other_tenant)

    assert api.get(f"{resource}/{theirs.pk}").status_code == 404


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_filter_by_stock_location_identifier(api: AdminApi, resource: str) -> None:
    other_shop = StockLocationFactory(account=api.tenant.account, market=api.tenant.market, identifier="shop-2")
    _order(resource, api.tenant, order_identifier="in-shop-1")
    _order(resource, api.tenant, order_identifier="in-shop-2", stock_location=other_shop)

    assert _identifiers(api, resource, stock_location="shop-2") == ["in-shop-2"]


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_filter_by_order_identifier(api: AdminApi, resource: str) -> None:
    _order(resource, api.tenant, order_identifier="WEB-1")
    _order(resource, api.tenant, order_identifier="WEB-2")

    assert _identifiers(api, resource, order_identifier="WEB-1") == ["WEB-1"]


@pytest.mark.parametrize("resource", ["incoming-orders", "outgoing-orders"])
def test_filter_by_state(api: AdminApi, resource: str) -> None:
    _order(resource, api.tenant, order_identifier="open", state=OrderState.CREATED)
    _order(resource, api.tenant, order_identifier="done", state=OrderState.COMPLETED)

    assert _identifiers(api, resource, state="completed") == ["done"]


@pytest.mark.parametrize("resource", ["incoming-orders", "outgoing-orders"])
def test_an_unknown_state_filter_is_400(api: AdminApi, resource: str) -> None:
    response = api.get(resource, state="lost")

    assert response.status_code == 400
    assert error_fields(response) == {"state"}


def test_an_empty_filter_means_no_filter(api: AdminApi) -> None:
    _order("incoming-orders", api.tenant, order_identifier="WEB-1")

    assert _identifiers(api, "incoming-orders", state="", stock_location="") == ["WEB-1"]


def test_list_is_paginated_with_limit_and_offset(api: AdminApi) -> None:
    for n in range(5):
        _order("incoming-orders", api.tenant, order_identifier=f"o-{n}")

    body = api.get("incoming-orders", limit="2", offset="2").json()

    assert body["count"] == 5
    assert [o["order_identifier"] for o in body["results"]] == ["o-2", "o-1"]
    assert "offset=4" in body["next"]
    assert body["previous"] is not None


def test_an_incoming_order_has_the_fields_of_the_spec(api: AdminApi) -> None:
    order = _order(
        "incoming-orders",
        api.tenant,
        order_identifier="WEB-1",
        basket={"currency": "DKK", "line_items": [{"product_identifier": "p1", "quantity": 1, "price": 10.5}]},
        customer={"name": "Jane"},
        payment={"reference": "PAY-1"},
        handling_type="click_and_collect",
    )

    body = api.get(f"incoming-orders/{order.pk}").json()

    assert body == {
        "id": order.pk,
        "order_identifier": "WEB-1",
        "stock_location": "shop-1",
        "basket": {"currency": "DKK", "line_items": [{"product_identifier": "p1", "quantity": 1, "price": 10.5}]},
        "customer": {"name": "Jane"},
        "payment": {"reference": "PAY-1"},
        "shipping": None,
        "handling_type": "click_and_collect",
        "state": "created",
        "created_at": body["created_at"],
        "last_change_at": body["last_change_at"],
        "history": [],
    }


def test_an_external_order_has_no_state(api: AdminApi) -> None:
    order = _order("external-orders", api.tenant)

    body = api.get(f"external-orders/{order.pk}").json()

    assert set(body) == {"id", "order_identifier", "stock_location", "basket", "customer", "created_at"}


def test_the_history_of_an_outgoing_order_is_in_order(api: AdminApi) -> None:
    order = _order("outgoing-orders", api.tenant, state=OrderState.COMPLETED)
    for previous, state in [("created", "processing"), ("processing", "ready"), ("ready", "completed")]:
        OrderStateChangeFactory(incoming_order=None, outgoing_order=order, previous_state=previous, state=state)

    history = api.get(f"outgoing-orders/{order.pk}").json()["history"]

    assert [(h["previous_state"], h["state"]) for h in history] == [
        ("created", "processing"),
        ("processing", "ready"),
        ("ready", "completed"),
    ]


def test_a_history_entry_has_its_cashier_comment_and_source(api: AdminApi) -> None:
    order = _order("incoming-orders", api.tenant)
    OrderStateChangeFactory(
        incoming_order=order,
        previous_state="",
        state="created",
        comment="Imported",
        cashier={"identifier": "cashier-7", "display_name": "AB"},
        source=OrderStateChange.Source.POS,
    )

    (entry,) = api.get(f"incoming-orders/{order.pk}").json()["history"]

    assert entry == {
        "state": "created",
        "previous_state": None,
        "comment": "Imported",
        "cashier": {"identifier": "cashier-7", "display_name": "AB"},
        "source": "pos",
        "created_at": entry["created_at"],
    }


def test_the_destination_of_an_outgoing_order_is_a_stock_location_identifier(api: AdminApi) -> None:
    other_shop = StockLocationFactory(account=api.tenant.account, market=api.tenant.market, identifier="shop-2")
    _order("outgoing-orders", api.tenant, order_identifier="to-shop", destination=other_shop)
    _order("outgoing-orders", api.tenant, order_identifier="to-erp", destination=None)

    destinations = {o["order_identifier"]: o["destination"] for o in results(api.get("outgoing-orders"))}

    assert destinations == {"to-shop": "shop-2", "to-erp": None}


@pytest.mark.parametrize("resource", ["incoming-orders", "outgoing-orders"])
def test_listing_does_not_query_once_per_order(api: AdminApi, resource: str) -> None:
    def queries_for_a_page() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(resource).status_code == 200
        return len(captured)

    def add_order_with_history() -> None:
        order = _order(resource, api.tenant)
        incoming = resource == "incoming-orders"
        link = {"incoming_order": order} if incoming else {"incoming_order": None, "outgoing_order": order}
        OrderStateChangeFactory(**link)

    add_order_with_history()
    queries_for_a_page()  # the first request of a key also records its last use
    queries_for_one = queries_for_a_page()
    for _ in range(4):
        add_order_with_history()

    assert queries_for_a_page() == queries_for_one


@pytest.mark.parametrize("resource", ORDER_FACTORIES)
def test_orders_cannot_be_written_through_the_api(api: AdminApi, resource: str) -> None:
    order = _order(resource, api.tenant)

    assert api.post(resource, {}).status_code == 405
    assert api.delete(f"{resource}/{order.pk}").status_code == 405
