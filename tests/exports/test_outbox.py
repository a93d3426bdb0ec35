"""The outbox: entities enter exports in the transaction that creates them (spec: Events)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import connections, transaction

from exports import services
from exports.models import ExportDelivery, ExportItem, ExportStatus
from orders import services as order_services
from orders.models import IncomingOrder, OrderStateChange
from tests.factories import MarketFactory, StockLocationFactory
from tests.support.imports import import_orders
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db


def test_a_materialised_order_emits_a_created_event_into_each_matching_queue(tenant, client):
    realtime = make_queue(tenant, "https://example.com/a", name="a")
    hourly = make_queue(tenant, "https://example.com/b", name="b", trigger="hourly")
    make_queue(tenant, "https://example.com/c", name="disabled", enabled=False)
    make_queue(tenant, "https://example.com/d", name="other type", entity_type="sales")
    import_orders(client, tenant, "web-1")
    change = OrderStateChange.objects.get()
    items = ExportItem.objects.order_by("queue__name")
    assert [(i.queue, i.object_id, i.element_key) for i in items] == [
        (realtime, change.pk, f"web-1:{change.pk}"),
        (hourly, change.pk, f"web-1:{change.pk}"),
    ]
    assert items[0].delivery is not None and items[0].delivery.status == ExportStatus.PENDING
    assert items[1].delivery is None  # a cron queue's items wait for their window


def test_an_entity_in_two_queues_gets_two_independent_deliveries(tenant, client):
    make_queue(tenant, "https://example.com/a", name="a")
    make_queue(tenant, "https://example.com/b", name="b")
    import_orders(client, tenant, "web-1")
    assert ExportDelivery.objects.count() == 2
    assert len(set(ExportDelivery.objects.values_list("delivery_id", flat=True))) == 2


def test_queue_filters_by_stock_location_and_market(tenant, client):
    se = MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    StockLocationFactory(account=tenant.account, market=se, identifier="shop-se")
    make_queue(tenant, "https://example.com/a", name="shop-1 only", filters={"stock_locations": ["shop-1"]})
    make_queue(tenant, "https://example.com/b", name="se only", filters={"markets": ["se"]})
    import_orders(client, tenant, "dk-order")
    import_orders(client, tenant, "se-order", location="shop-se")
    keys = {(i.queue.name, i.element_key.split(":")[0]) for i in ExportItem.objects.select_related("queue")}
    assert keys == {("shop-1 only", "dk-order"), ("se only", "se-order")}


def test_a_rolled_back_entity_exports_nothing(tenant):
    make_queue(tenant, "https://example.com/a")
    with pytest.raises(RuntimeError), transaction.atomic():
        services.enqueue(
            account=tenant.account,
            entity_type="incoming_order_state_changes",
            entries=[services.ExportEntry(object_id=1, element_key="k")],
        )
        assert ExportItem.objects.count() == 1
        raise RuntimeError("the entity's transaction fails")
    assert not ExportItem.objects.exists()
    assert not ExportDelivery.objects.exists()


def test_enqueue_outside_a_transaction_is_refused(tenant):
    # pytest-django runs the test in a transaction; the guard is checked as if there were none.
    with mock.patch.object(connections["default"], "in_atomic_block", False), pytest.raises(RuntimeError):
        services.enqueue(account=tenant.account, entity_type="incoming_order_state_changes", entries=[])


def test_an_outgoing_order_to_an_external_system_is_exported_and_an_internal_one_is_not(tenant):
    make_queue(tenant, "https://example.com/a", entity_type="outgoing_orders")
    other_shop = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    body = {"order_identifier": "out-1", "basket": {"line_items": [], "total": 10}}
    external = order_services.create_outgoing_order(
        account=tenant.account, stock_location=tenant.stock_location, order=body
    )
    order_services.create_outgoing_order(
        account=tenant.account,
        stock_location=tenant.stock_location,
        order={**body, "order_identifier": "out-2"},
        destination=other_shop,
    )
    item = ExportItem.objects.get()
    assert (item.object_id, item.element_key) == (external.pk, f"out-1:{external.pk}")


def test_every_later_incoming_order_state_change_is_an_event(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "web-1")
    incoming = IncomingOrder.objects.get()
    order_services.change_incoming_order_state(
        account=tenant.account,
        order=incoming,
        move=order_services.StateMove("ready", "packed", {"display_name": "AB", "identifier": "c1"}),
    )
    assert ExportItem.objects.count() == 2
    latest = ExportItem.objects.order_by("-id").first()
    entity = services.elements_of(latest.queue, [latest])[0][0].entity
    assert entity["state"]["order_state"] == "ready"
    assert entity["state"]["last_change_comment"] == "packed"
    assert entity["state"]["last_change_by"] == {"display_name": "AB", "identifier": "c1"}
    assert entity["order"]["order_identifier"] == "web-1"
    assert entity["order"]["basket"]["currency"] == "DKK"
