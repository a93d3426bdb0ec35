"""A broker outage under load loses no export (spec: Events; the outbox).

A private Redis (its own port, nothing on disk) carries the tasks between this process and a real Celery
worker. Entities keep being created while Redis is stopped: their hand-off fails, their deliveries stay
pending in the database. Redis comes back empty (every task queued before the outage is gone too) and the
sweeper, run as the beat runs it, hands everything still pending to the worker: every entity reaches the
web hook, and every export item ends logged as a success.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import transaction

from accounts.models import StockLocation
from exports.models import ExportDelivery, ExportItem, ExportStatus
from exports.tasks import sweep_exports
from orders import services as order_services
from tests.support.private_redis import REDIS_SERVER, PrivateRedis
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import running_worker, use_broker, use_queue

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed on this machine")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


# A sale summary of no lines, as the spec's Outgoing order requires it (its export is checked against the schema).
EMPTY_BASKET = {
    "line_items": [],
    "base_price": 0,
    "sub_total": 0,
    "total_discounts": 0,
    "total_tax_amount": 0,
    "sales_tax_amount": 0,
    "vat_amount": 0,
    "total": 0,
    "is_return": False,
    "taxes": [],
}


def place_orders(tenant: Tenant, prefix: str, count: int) -> None:
    """Outgoing orders to an external system, one transaction each (each exported in real time)."""
    shop = StockLocation.objects.get(account=tenant.account, identifier="shop-1")
    for n in range(count):
        with transaction.atomic():
            order_services.create_outgoing_order(
                account=tenant.account,
                stock_location=shop,
                order={"order_identifier": f"{prefix}-{n}", "basket": EMPTY_BASKET},
            )


def test_an_outage_of_the_broker_under_load_loses_no_export(
    tenant: Tenant, reachable_receiver: Receiver, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    make_queue(tenant, reachable_receiver.url, entity_type="outgoing_orders")
    restore_broker = use_broker(private_redis.url)
    try:
        with running_worker(tmp_path, ["--pool=solo"], env={"CELERY_BROKER_URL": private_redis.url}) as worker:
            restore_queue = use_queue(worker.queue)
            try:
                place_orders(tenant, "before", 10)
                private_redis.kill()
                place_orders(tenant, "during", 10)  # each hand-off fails: the broker is gone
                assert ExportDelivery.objects.filter(status=ExportStatus.PENDING).count() >= 10
                private_redis.start()  # back, and empty
                place_orders(tenant, "after", 10)

                def all_delivered() -> bool:
                    sweep_exports.delay()  # what the beat does every few seconds
                    return ExportItem.objects.filter(status=ExportStatus.SUCCESS).count() == 30

                wait_until(all_delivered, 120, message="every export delivered after the outage")
            finally:
                restore_queue()
    finally:
        restore_broker()
    received = {key for got in reachable_receiver.received for key in json.loads(got.body)}
    assert {key.split(":")[0] for key in received} == {
        f"{prefix}-{n}" for prefix in ("before", "during", "after") for n in range(10)
    }
    assert not ExportItem.objects.exclude(status=ExportStatus.SUCCESS).exists()
