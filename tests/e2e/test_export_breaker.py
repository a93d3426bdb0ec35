"""A real Celery worker sending to a receiver that fails opens the destination's circuit breaker; the deliveries it
holds back are paused, not attempted, and all arrive once the receiver answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.models import CircuitBreaker
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportStatus
from exports.tasks import sweep_exports
from tests.support.imports import batch, post_orders
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import running_worker, tasks_to

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_deliveries_held_back_by_an_open_breaker_are_paused_then_all_delivered(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, tmp_path: Path
) -> None:
    make_queue(tenant, reachable_receiver.url)
    reachable_receiver.script = [503, 503, 503]
    env = {"BREAKER_FAILURE_THRESHOLD": "2", "BREAKER_COOLDOWN_SECONDS": "1", "BREAKER_MEMO_SECONDS": "0"}
    with running_worker(tmp_path, ["--pool=solo"], env=env) as worker, tasks_to(worker.queue):
        assert post_orders(live_server, tenant, batch("brk", 6)).status_code == 200
        wait_until(
            lambda: (
                ExportDelivery.objects.filter(paused_until__isnull=False).exists()
                or CircuitBreaker.objects.filter(trips__gt=0).exists()
            ),
            60,
            message="the breaker to open",
        )

        def delivered() -> bool:
            sweep_exports.delay()  # the beat's sweeper, run by hand
            statuses = list(ExportItem.objects.filter(account=tenant.account).values_list("status", flat=True))
            return statuses.count(ExportStatus.SUCCESS) == 6

        wait_until(delivered, 90, message="all 6 deliveries once the receiver answers")
    # Every request the receiver saw is an attempt, and nothing else is: a pause made none.
    assert ExportAttempt.objects.filter(account=tenant.account).count() == len(reachable_receiver.received) == 9
    assert not ExportDelivery.objects.filter(paused_until__isnull=False).exists()
