"""Orders in the admin: visible and searchable; never changed or deleted (spec), state history inline."""

from __future__ import annotations

import pytest

from orders.models import ExternalOrder, IncomingOrder, OrderState, OrderStateChange, OutgoingOrder
from tests.factories import (
    ExternalOrderFactory,
    IncomingOrderFactory,
    OrderStateChangeFactory,
    OutgoingOrderFactory,
)
from tests.support.admin import admin_url, listed

ORDER_FACTORIES = [IncomingOrderFactory, ExternalOrderFactory, OutgoingOrderFactory]


def factory_id(factory) -> str:
    return factory._meta.model.__name__


@pytest.mark.parametrize("factory", ORDER_FACTORIES, ids=factory_id)
def test_order_cannot_be_deleted(admin_client, tenant, factory) -> None:
    order = factory(account=tenant.account, stock_location=tenant.stock_location)

    response = admin_client.post(admin_url(order, "delete", order.pk), {"post": "yes"})

    assert response.status_code == 403
    assert type(order).objects.filter(pk=order.pk).exists()


@pytest.mark.parametrize("factory", ORDER_FACTORIES, ids=factory_id)
def test_order_changelist_offers_no_bulk_actions(admin_client, tenant, factory) -> None:
    order = factory(account=tenant.account, stock_location=tenant.stock_location)

    response = admin_client.get(admin_url(order, "changelist"))

    # Delete is the only action Django offers; without it there is no action form at all.
    assert response.context["action_form"] is None


@pytest.mark.parametrize("factory", ORDER_FACTORIES, ids=factory_id)
def test_order_refuses_a_post_to_change(admin_client, tenant, factory) -> None:
    order = factory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="A-1")

    response = admin_client.post(admin_url(order, "change", order.pk), {"order_identifier": "B-2"})

    assert response.status_code == 403
    order.refresh_from_db()
    assert order.order_identifier == "A-1"


@pytest.mark.parametrize("model", [IncomingOrder, ExternalOrder, OutgoingOrder], ids=lambda m: m.__name__)
def test_order_search_finds_by_order_identifier(admin_client, tenant, model) -> None:
    factory = {IncomingOrder: IncomingOrderFactory, ExternalOrder: ExternalOrderFactory}.get(
        model, OutgoingOrderFactory
    )
    wanted = factory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="WEB-10042")
    factory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="WEB-20001")

    assert listed(admin_client.get(admin_url(model, "changelist"), {"q": "10042"})) == [wanted]


def test_incoming_orders_filter_by_state(admin_client, tenant) -> None:
    ready = IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location, state=OrderState.READY)
    IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location)

    rows = listed(admin_client.get(admin_url(IncomingOrder, "changelist"), {"state__exact": "ready"}))

    assert rows == [ready]


def test_incoming_order_shows_its_state_history_read_only(admin_client, tenant) -> None:
    order = IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location)
    OrderStateChangeFactory(incoming_order=order, previous_state="created", state="processing", comment="picked")

    response = admin_client.get(admin_url(order, "change", order.pk))

    (inline,) = response.context["inline_admin_formsets"]
    assert [form.original.comment for form in inline] == ["picked"]
    assert not inline.has_add_permission and not inline.has_change_permission and not inline.has_delete_permission


def test_outgoing_order_shows_its_state_history(admin_client, tenant) -> None:
    order = OutgoingOrderFactory(account=tenant.account, stock_location=tenant.stock_location)
    OrderStateChangeFactory(incoming_order=None, outgoing_order=order, comment="sent to shop-2")

    response = admin_client.get(admin_url(order, "change", order.pk))

    (inline,) = response.context["inline_admin_formsets"]
    assert [form.original.comment for form in inline] == ["sent to shop-2"]


def test_state_changes_cannot_be_deleted(admin_client, tenant) -> None:
    change = OrderStateChangeFactory(
        incoming_order=IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location)
    )

    assert admin_client.post(admin_url(change, "delete", change.pk), {"post": "yes"}).status_code == 403
    assert OrderStateChange.objects.filter(pk=change.pk).exists()
