"""The export pipeline with real processes: an imported order's event reaches a real web hook receiver
through a real Celery worker, and a worker killed mid-delivery loses nothing."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook

from exports.models import ExportDelivery, ExportItem, ExportStatus
from exports.tasks import sweep_exports
from tests.support.imports import batch, post_orders
from tests.support.queues import SECRET, make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import CeleryWorkerProcess, running_worker, tasks_to

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def items_by_status(tenant: Tenant) -> dict[str, int]:
    statuses = list(ExportItem.objects.filter(account=tenant.account).values_list("status", flat=True))
    return {status: statuses.count(status) for status in set(statuses)}


def test_imported_orders_are_exported_to_the_web_hook_by_the_worker(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, celery_worker_process: CeleryWorkerProcess
) -> None:
    make_queue(tenant, reachable_receiver.url)
    orders = batch("exp", 5)
    assert post_orders(live_server, tenant, orders).status_code == 200

    wait_until(lambda: items_by_status(tenant) == {ExportStatus.SUCCESS: 5}, 60, message="5 delivered export items")
    assert len(reachable_receiver.received) == 5
    identifiers = set()
    for got in reachable_receiver.received:
        Webhook(SECRET).verify(got.body, got.headers)
        [element] = json.loads(got.body).values()
        identifiers.add(element["order"]["order_identifier"])
    assert identifiers == {o["order_identifier"] for o in orders}


def test_a_worker_killed_mid_delivery_leaves_it_to_be_delivered_again(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, tmp_path: Path
) -> None:
    make_queue(tenant, reachable_receiver.url, delivery={"read_timeout": 30})
    reachable_receiver.script = ["sleep:20"]  # the first delivery hangs at the receiver while the worker is killed
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with running_worker(tmp_path / "first", ["--pool=solo"], must_survive=False) as worker, tasks_to(worker.queue):
        assert post_orders(live_server, tenant, batch("kill", 1)).status_code == 200
        wait_until(
            lambda: len(reachable_receiver.received) == 1,
            60,
            message="the first delivery to reach the receiver",
        )
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait()
    delivery = ExportDelivery.objects.get(account=tenant.account)
    assert (delivery.status, delivery.attempts) == (ExportStatus.PENDING, 1)  # leased by the dead worker

    with running_worker(tmp_path / "second", ["--pool=solo"]) as worker, tasks_to(worker.queue):
        # The beat's sweeper, run by hand: once the lease has run out the delivery is taken up again.
        def delivered() -> bool:
            sweep_exports.delay()
            return items_by_status(tenant) == {ExportStatus.SUCCESS: 1}

        wait_until(delivered, 60, message="the delivery to be taken up again and delivered")
    assert len(reachable_receiver.received) == 2
    assert {r.headers["webhook-id"] for r in reachable_receiver.received} == {
        delivery.delivery_id
    }  # one id: deduplicable
