"""Several deliveries of one export queue go out at once, in the delivery task's send threads, within the queue's
bound, each to one sender only; the task's own thread records the outcomes, and at the soft time limit the sends
still under way are recorded as timeouts with their leases released.

The database is used outside a test transaction here (``transaction=True``): the send threads have connections of
their own, which would not see a test transaction's rows (``deliver_queue`` then sends in its own thread).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from unittest import mock

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportStatus
from exports.services import enqueueing, sending
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.receivers import serving

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class GatheringReceiver:
    """Answers 200 once ``parties`` requests are held at the same time (a barrier), 500 if they never gather; counts
    the requests held at once and the delivery ids received."""

    parties: int
    url: str = ""
    held: int = 0
    most_held: int = 0
    ids: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def gathering(request: Any) -> Iterator[GatheringReceiver]:
    receiver = GatheringReceiver(parties=request.param)
    barrier = threading.Barrier(receiver.parties, timeout=15)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.ids[self.headers.get("webhook-id", "")] += 1
                receiver.held += 1
                receiver.most_held = max(receiver.most_held, receiver.held)
            try:
                barrier.wait()
                status = 200
            except threading.BrokenBarrierError:
                status = 500
            with receiver.lock:
                receiver.held -= 1
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as url:
        receiver.url = url
        try:
            yield receiver
        finally:
            barrier.abort()


@pytest.mark.parametrize("gathering", [3], indirect=True)
def test_a_queues_deliveries_go_out_several_at_once_within_its_bound_each_once(
    tenant, client, allow_loopback, gathering, settings
):
    settings.EXPORT_SEND_THREADS = 4
    queue = make_queue(tenant, gathering.url, concurrency=3, delivery={"read_timeout": 30})
    with mock.patch.object(enqueueing, "hand_off"):
        import_orders(client, tenant, *"abcdef")
    # Sent one after another, the first request would wait alone at the receiver's barrier and fail with 500.
    statuses = services.deliver_queue(queue_id=queue.pk)
    pks = set(ExportDelivery.objects.values_list("pk", flat=True))
    assert statuses == dict.fromkeys(pks, ExportStatus.SUCCESS)
    assert gathering.most_held == 3  # the queue's bound, though the task has 4 send threads
    assert set(gathering.ids.values()) == {1}
    assert len(gathering.ids) == 6
    assert ExportAttempt.objects.filter(ok=True).count() == 6
    assert not ExportDelivery.objects.filter(lease_until__isnull=False).exists()
    assert set(ExportDelivery.objects.values_list("lease_owner", flat=True)) == {""}


@pytest.mark.parametrize("gathering", [2], indirect=True)
def test_a_soft_time_limit_in_the_tasks_thread_records_the_sends_under_way_as_timeouts_and_frees_them(
    tenant, client, allow_loopback, gathering, settings
):
    settings.EXPORT_SEND_THREADS = 4
    settings.EXPORT_RETRY_BASE_DELAY = 10
    queue = make_queue(tenant, gathering.url, delivery={"read_timeout": 30})
    with mock.patch.object(enqueueing, "hand_off"):
        import_orders(client, tenant, "a")  # one delivery: it waits at the barrier for a second that never comes
    real_wait = sending.wait
    calls = [0]

    def wait(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 1:  # Celery raises the soft limit in the task's thread, here while it waits for the send
            raise SoftTimeLimitExceeded()
        return real_wait(*args, **kwargs)

    with (
        mock.patch.object(sending, "wait", side_effect=wait),
        mock.patch.object(enqueueing, "hand_off") as hand_off,
    ):
        statuses = services.deliver_queue(queue_id=queue.pk, seconds=5)
    delivery = ExportDelivery.objects.get()
    assert statuses == {delivery.pk: ExportStatus.PENDING}
    assert (delivery.error, delivery.attempts, delivery.lease_until, delivery.lease_owner) == (
        services.TIME_LIMIT_ERROR,
        1,
        None,
        "",
    )
    attempt = ExportAttempt.objects.get()
    assert (attempt.number, attempt.ok, attempt.error) == (1, False, services.TIME_LIMIT_ERROR)
    hand_off.assert_any_call({queue.pk: []}, cron=False)  # the rest of the queue goes to a new task
