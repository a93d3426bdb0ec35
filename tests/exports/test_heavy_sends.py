"""A heavy real-time delivery (its entities hold more than EXPORT_HEAVY_ELEMENTS list elements) is sent, and so
rendered, by a send thread whose CPU priority is lower by EXPORT_HEAVY_NICE: a tenant's large renders yield the
cores to other work. Linux gives each thread a nice value of its own."""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace

import pytest

from exports import services
from exports.models import ExportDelivery, ExportStatus
from tests.exports.conftest import make_queue
from tests.exports.receiver import running_receiver
from tests.imports.conftest import materialise_pending, order

needs_thread_priorities = pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread priorities")


def _own_priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _fresh_pools() -> None:
    with services._pool_lock:
        services._pool_state.clear()


@needs_thread_priorities
def test_the_heavy_pool_runs_its_sends_at_a_lower_cpu_priority(settings):
    settings.EXPORT_HEAVY_NICE = 10
    _fresh_pools()
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert services._send_pool(heavy=True).submit(_own_priority).result() == min(19, base + 10)
    assert services._send_pool().submit(_own_priority).result() == base
    _fresh_pools()


@needs_thread_priorities
def test_a_nice_of_0_keeps_the_process_priority(settings):
    settings.EXPORT_HEAVY_NICE = 0
    _fresh_pools()
    assert services._send_pool(heavy=True).submit(_own_priority).result() == os.getpriority(os.PRIO_PROCESS, 0)
    _fresh_pools()


def test_heavy_counts_the_list_elements_of_the_deliverys_entities(settings):
    settings.EXPORT_HEAVY_ELEMENTS = 200
    items = [SimpleNamespace(entity_type="sales", object_id=1), SimpleNamespace(entity_type="sales", object_id=2)]
    entities = {
        ("sales", 1): {"identifier": "s-1", "summary": {"line_items": [{}] * 150}, "payments": [{}] * 10},
        ("sales", 2): {"identifier": "s-2", "summary": {"line_items": [{}] * 40}},
    }
    assert not services._heavy(items, entities)  # 200: not more than the bound
    entities[("sales", 2)]["summary"]["line_items"].append({})
    assert services._heavy(items, entities)
    settings.EXPORT_HEAVY_ELEMENTS = 0  # off
    assert not services._heavy(items, entities)
    assert not services._heavy(None, entities)  # a cron window, streamed


@pytest.mark.django_db(transaction=True)
def test_a_heavy_delivery_is_delivered_by_the_heavy_threads(tenant, client, settings, allow_loopback):
    settings.EXPORT_HEAVY_ELEMENTS = 2  # the order's three lines are more
    settings.EXPORT_SEND_THREADS = 4
    _fresh_pools()
    with running_receiver() as receiver:
        queue = make_queue(tenant, receiver.url)
        body = order("web-heavy-1")
        line = body["basket"]["line_items"][0]
        body["basket"]["line_items"] = [{**line, "product_identifier": f"p-{n}"} for n in range(3)]
        client.post(
            f"/imports/incoming_orders?{tenant.query(stock_location='shop-1')}", {"orders": [body]}, format="json"
        )
        materialise_pending(tenant)
        delivery = ExportDelivery.objects.get(queue=queue)
        assert services.deliver_queue(queue_id=queue.pk, delivery_pks=[delivery.pk]) == {
            delivery.pk: ExportStatus.SUCCESS
        }
    assert len(receiver.received) == 1
    assert True in services._pool_state  # sent by the heavy pool
    _fresh_pools()
