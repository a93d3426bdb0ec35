"""A lease that would run out mid-send never lets a second worker send the same delivery; a lease whose worker
process was killed is taken over within seconds, long before it runs out.

A real Celery worker (prefork, two processes: the time limits need it) with a lease of 4 s, so time limits of
2 s (soft) and 2.2 s (hard); a real receiver on 127.0.0.1 holds the request for 10 s, longer than the lease, and
the web hook's own read timeout is 30 s. While the first send hangs and long after its lease would have run out,
the sweeper runs every few tenths of a second and extra tasks for the queue are published: the receiver still
gets the delivery exactly once, and the attempt is recorded as a timeout under the spec's retry rule.

A pool process killed with SIGKILL mid-send stops proving it is alive (``core.liveness``): the sweeper releases
its lease at once and hands the delivery over, and the queue delivers again, with a lease of an hour.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportStatus
from exports.tasks import deliver, sweep_exports
from tests.support.imports import batch, post_orders
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import running_worker, tasks_to

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

LEASE_SECONDS = 4.0
HOLD_SECONDS = 10.0  # the receiver holds the request this long: longer than the lease


def requests_per_delivery_id(reachable_receiver: Receiver) -> Counter[str]:
    with reachable_receiver.lock:
        return Counter(r.headers["webhook-id"] for r in reachable_receiver.received)


def test_no_second_worker_sends_a_delivery_whose_first_send_outlives_the_lease(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, tmp_path: Path
) -> None:
    queue = make_queue(tenant, reachable_receiver.url, delivery={"read_timeout": 30})
    reachable_receiver.script = [f"sleep:{HOLD_SECONDS:g}"]
    env = {
        "EXPORT_LEASE_SECONDS": str(LEASE_SECONDS),
        "EXPORT_SWEEP_GRACE_SECONDS": "0",  # the sweeper hands over anything not leased at once
        "EXPORT_RETRY_BASE_DELAY": "300",  # no retry within the test: any second request would be a duplicate
        "EXPORT_QUEUE_CONCURRENCY": "2",  # both worker processes may take the queue's deliveries
    }
    with running_worker(tmp_path, ["--pool=prefork", "--concurrency=2"], env=env) as worker, tasks_to(worker.queue):
        assert post_orders(live_server, tenant, batch("lease", 1)).status_code == 200
        wait_until(
            lambda: len(reachable_receiver.received) == 1,
            60,
            message="the first send to reach the receiver",
        )
        first_seen = time.monotonic()
        delivery = ExportDelivery.objects.get(account=tenant.account)
        # The beat's sweeper every 0.3 s, and more tasks for the queue, until well past the lease and the
        # receiver's answer: a delivery handed over while its first send still ran would be sent again.
        while time.monotonic() - first_seen < HOLD_SECONDS + 2:
            sweep_exports.delay()
            deliver.delay(queue.pk, [delivery.pk])
            time.sleep(0.3)
        wait_until(
            lambda: ExportAttempt.objects.filter(delivery__account=tenant.account).exists(),
            30,
            message="the first attempt to be recorded",
        )
    assert requests_per_delivery_id(reachable_receiver) == Counter({delivery.delivery_id: 1})
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.lease_until) == (ExportStatus.PENDING, 1, None)
    attempt = ExportAttempt.objects.get(delivery=delivery)
    # Cut off within the task's soft time limit (half the lease), recorded as a timeout: retried per the spec.
    assert attempt.error == "timeout"
    assert attempt.duration_ms < LEASE_SECONDS / 2 * 1000
    assert delivery.next_attempt_at > attempt.started_at


TAKEOVER_SECONDS = 30.0  # the bound: the queue delivers again this soon after the kill


def test_a_worker_process_killed_mid_send_has_its_lease_taken_over_long_before_it_runs_out(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, tmp_path: Path, settings: Any
) -> None:
    settings.LIVENESS_TIMEOUT_SECONDS = 3.0  # this process's sweeper judges the worker's heartbeats by it
    queue = make_queue(tenant, reachable_receiver.url, delivery={"read_timeout": 60})
    reachable_receiver.script = ["sleep:20"]  # the first send hangs: the process is killed in the middle of it
    env = {
        "EXPORT_LEASE_SECONDS": "3600",  # the lease alone would hold the queue for an hour
        "EXPORT_QUEUE_CONCURRENCY": "1",  # and while it is live, nothing else of the queue may be sent
        "LIVENESS_INTERVAL_SECONDS": "0.5",
        "LIVENESS_TIMEOUT_SECONDS": "3",
        "EXPORT_RETRY_BASE_DELAY": "300",
    }
    with running_worker(tmp_path, ["--pool=prefork", "--concurrency=1"], env=env) as worker, tasks_to(worker.queue):
        assert post_orders(live_server, tenant, batch("killed", 1)).status_code == 200
        wait_until(
            lambda: len(reachable_receiver.received) == 1,
            60,
            message="the first send to reach the receiver",
        )
        first = ExportDelivery.objects.get(account=tenant.account)
        assert first.lease_owner  # the pool process that sends it: hostname:pid
        lease_until = first.lease_until
        os.kill(int(first.lease_owner.rsplit(":", 1)[1]), signal.SIGKILL)
        assert post_orders(live_server, tenant, batch("after", 1)).status_code == 200
        taken_over: list[int] = []

        def queue_delivered_again() -> bool:
            taken_over.append(services.sweep())  # the beat's sweeper, every EXPORT_SWEEP_INTERVAL_SECONDS
            time.sleep(0.5)
            return ExportDelivery.objects.filter(queue=queue, status=ExportStatus.SUCCESS).count() == 2

        # The bound as the wait's: 3 s to be seen dead, a sweep, a new pool process, two sends.
        wait_until(queue_delivered_again, TAKEOVER_SECONDS, message="the queue to deliver again after the kill")
    assert any(taken_over)
    first.refresh_from_db()
    # The killed attempt stays counted; the receiver got the delivery twice under one delivery id, as documented.
    assert (first.status, first.attempts, first.lease_until, first.lease_owner) == (ExportStatus.SUCCESS, 2, None, "")
    assert lease_until is not None and first.finished_at is not None and first.finished_at < lease_until
    second = ExportDelivery.objects.exclude(pk=first.pk).get(queue=queue)
    assert requests_per_delivery_id(reachable_receiver) == Counter({first.delivery_id: 2, second.delivery_id: 1})
