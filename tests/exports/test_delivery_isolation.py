"""A delivery task works on one export queue, leases each delivery just before its send, holds
at most the queue's concurrency cap of places, runs under time limits shorter than the lease, and the sweeper
does not publish a young hand-off again."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.checks import run_checks
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import liveness
from core.models import LiveProcess
from exports import checks, services, tasks
from exports.deliveries import REGISTRY as DELIVERIES
from exports.deliveries.base import DeliveryResult
from exports.models import ExportAttempt, ExportDelivery, ExportQueue, ExportStatus
from exports.services import enqueueing, leasing
from tests.support.imports import import_orders
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def leased() -> set[int]:
    return set(ExportDelivery.objects.filter(lease_until__gt=timezone.now()).values_list("pk", flat=True))


def test_a_task_sends_only_its_own_queues_deliveries_never_another_accounts(
    tenant, other_tenant, client, allow_loopback, receiver
):
    mine = make_queue(tenant, receiver.url)
    theirs = make_queue(other_tenant, receiver.url)
    import_orders(client, tenant, "a", "b")
    import_orders(client, other_tenant, "x", "y")
    statuses = services.deliver_queue(queue_id=mine.pk)
    assert set(statuses) == set(ExportDelivery.objects.filter(queue=mine).values_list("pk", flat=True))
    assert len(receiver.received) == 2
    untouched = ExportDelivery.objects.filter(queue=theirs)
    assert [(d.status, d.attempts) for d in untouched] == [(ExportStatus.PENDING, 0)] * 2


def test_each_lease_is_taken_just_before_its_send_so_unstarted_work_stays_free(tenant, client, allow_loopback):
    queue = make_queue(tenant, "http://127.0.0.1:9/hook")
    import_orders(client, tenant, "a", "b", "c")
    seen: list[tuple[set[int], list[int]]] = []

    def send(rendered: Any, *, delivery_id: str, **kwargs: Any) -> DeliveryResult:
        sending = ExportDelivery.objects.get(delivery_id=delivery_id)
        attempts = list(ExportDelivery.objects.order_by("pk").values_list("attempts", flat=True))
        seen.append((leased() - {sending.pk}, attempts))
        return DeliveryResult(ok=True, status_code=200)

    with mock.patch.object(DELIVERIES["webhook"], "deliver", side_effect=send):
        assert len(services.deliver_queue(queue_id=queue.pk)) == 3
    # While each is sent, no other delivery of the queue is leased or counted as attempted.
    assert seen == [(set(), [1, 0, 0]), (set(), [1, 1, 0]), (set(), [1, 1, 1])]
    assert leased() == set()


def test_a_queue_at_its_concurrency_cap_is_left_to_the_workers_holding_its_places(
    tenant, other_tenant, client, allow_loopback, receiver, settings
):
    settings.EXPORT_QUEUE_CONCURRENCY = 1
    busy = make_queue(tenant, receiver.url)
    other = make_queue(other_tenant, receiver.url)
    import_orders(client, tenant, "a", "b")
    import_orders(client, other_tenant, "x")
    first = ExportDelivery.objects.filter(queue=busy).order_by("pk").first()
    assert first is not None
    # Another worker is sending the first one.
    ExportDelivery.objects.filter(pk=first.pk).update(attempts=1, lease_until=timezone.now() + timedelta(minutes=5))
    assert services.deliver_queue(queue_id=busy.pk) == {}
    assert receiver.received == []
    assert len(services.deliver_queue(queue_id=other.pk)) == 1  # another queue is not held up by it
    settings.EXPORT_QUEUE_CONCURRENCY = 2
    assert list(services.deliver_queue(queue_id=busy.pk).values()) == [ExportStatus.SUCCESS]  # the second place
    assert ExportDelivery.objects.get(pk=first.pk).attempts == 1  # the leased one stays with its worker


def test_the_cap_counts_only_live_leases_of_the_queue(tenant, client, allow_loopback, receiver, settings):
    settings.EXPORT_QUEUE_CONCURRENCY = 1
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "a", "b")
    ExportDelivery.objects.update(lease_until=timezone.now() - timedelta(seconds=1))  # ran out: the worker died
    assert len(services.deliver_queue(queue_id=queue.pk)) == 2


def test_a_task_short_of_time_for_another_send_hands_the_rest_of_its_queue_to_a_new_task(
    tenant, client, allow_loopback, receiver
):
    queue = make_queue(tenant, receiver.url, delivery={"connect_timeout": 5, "read_timeout": 5})
    import_orders(client, tenant, "a", "b", "c")
    pks = list(ExportDelivery.objects.order_by("pk").values_list("pk", flat=True))
    with mock.patch.object(enqueueing, "hand_off") as hand_off:
        # 3 s of task time: a send of this queue may take 10 s, so after one send the task stops.
        statuses = services.deliver_queue(queue_id=queue.pk, delivery_pks=pks, seconds=3)
    assert list(statuses) == pks[:1]
    hand_off.assert_called_once_with({queue.pk: pks[1:]}, cron=False)


def test_a_soft_time_limit_mid_send_records_a_timeout_attempt_under_the_retry_rule_and_frees_the_lease(
    tenant, client, allow_loopback, settings
):
    settings.EXPORT_RETRY_BASE_DELAY = 10
    queue = make_queue(tenant, "http://127.0.0.1:9/hook")
    import_orders(client, tenant, "a", "b")
    first, second = ExportDelivery.objects.order_by("pk")
    with (
        mock.patch.object(DELIVERIES["webhook"], "deliver", side_effect=SoftTimeLimitExceeded()) as deliver,
        mock.patch.object(enqueueing, "hand_off") as hand_off,
    ):
        statuses = services.deliver_queue(queue_id=queue.pk)
    assert statuses == {first.pk: ExportStatus.PENDING}  # retried later, per the spec's rule
    assert deliver.call_count == 1  # the task stops at its soft limit
    hand_off.assert_any_call({queue.pk: []}, cron=False)  # the rest of the queue goes to a new task
    first.refresh_from_db()
    assert (first.attempts, first.lease_until, first.error) == (1, None, services.TIME_LIMIT_ERROR)
    assert timedelta(seconds=9) < first.next_attempt_at - timezone.now() <= timedelta(seconds=10)
    attempt = ExportAttempt.objects.get()
    assert (attempt.number, attempt.ok, attempt.error) == (1, False, services.TIME_LIMIT_ERROR)
    second.refresh_from_db()
    assert (second.attempts, second.lease_until) == (0, None)


def test_a_soft_time_limit_on_the_fifth_attempt_is_final(tenant, client, allow_loopback):
    queue = make_queue(tenant, "http://127.0.0.1:9/hook")
    import_orders(client, tenant, "a")
    ExportDelivery.objects.update(attempts=4)
    with (
        mock.patch.object(DELIVERIES["webhook"], "deliver", side_effect=SoftTimeLimitExceeded()),
        mock.patch.object(enqueueing, "hand_off"),
    ):
        assert list(services.deliver_queue(queue_id=queue.pk).values()) == [ExportStatus.FAILURE]


def test_each_send_gets_at_most_what_is_left_of_the_tasks_time(tenant, client, allow_loopback, receiver):
    receiver.script = ["sleep:5"]
    queue = make_queue(tenant, receiver.url, delivery={"read_timeout": 30})
    import_orders(client, tenant, "a")
    started = time.monotonic()
    with mock.patch.object(enqueueing, "hand_off"):
        statuses = services.deliver_queue(queue_id=queue.pk, seconds=1.5)
    assert time.monotonic() - started < 2.5
    assert list(statuses.values()) == [ExportStatus.PENDING]
    assert ExportDelivery.objects.get().error == "timeout"


@pytest.fixture
def trickling_receiver() -> Iterator[str]:
    """A receiver that answers 200 with a body sent one byte every 0.2 s, forever: no read ever times out."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                while not stop.is_set():
                    try:
                        conn.sendall(b"x")
                    except OSError:
                        break
                    time.sleep(0.2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def test_a_receiver_trickling_its_answer_is_cut_off_at_connect_plus_read_timeout(
    tenant, client, allow_loopback, trickling_receiver
):
    make_queue(tenant, trickling_receiver, delivery={"connect_timeout": 0.5, "read_timeout": 1})
    import_orders(client, tenant, "a")
    started = time.monotonic()
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.PENDING
    assert time.monotonic() - started < 3
    delivery = ExportDelivery.objects.get()
    assert (delivery.error, delivery.attempts) == ("timeout", 1)  # retryable: a timeout, per the spec's rule


# --- the sweeper ---------------------------------------------------------------------------------------------


def test_the_sweeper_does_not_publish_a_young_hand_off_again(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    ExportDelivery.objects.update(handed_off_at=timezone.now() - timedelta(minutes=5))
    with mock.patch.object(enqueueing, "hand_off") as hand_off:
        assert services.sweep(grace=timedelta(seconds=30)) == 1
        for _ in range(5):  # a beat tick every few seconds, the task still waiting in the broker
            assert services.sweep(grace=timedelta(seconds=30)) == 0
    assert hand_off.call_count == 1  # one hand-off in all: the first sweep's
    ExportDelivery.objects.update(handed_off_at=timezone.now() - timedelta(seconds=31))
    with mock.patch.object(enqueueing, "hand_off"):
        assert services.sweep(grace=timedelta(seconds=30)) == 1  # the hand-off grew old: it was lost


def test_a_retry_handed_over_with_a_countdown_is_not_swept_before_its_task_is_due(tenant, client, allow_loopback):
    make_queue(tenant, "http://127.0.0.1:9/hook")
    import_orders(client, tenant, "a")
    with (
        mock.patch.object(DELIVERIES["webhook"], "deliver", return_value=DeliveryResult(ok=False, retryable=True)),
        mock.patch.object(enqueueing, "hand_off"),
    ):
        assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.PENDING
    delivery = ExportDelivery.objects.get()
    assert delivery.handed_off_at == delivery.next_attempt_at
    ExportDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))  # due now
    with mock.patch.object(enqueueing, "hand_off"):
        assert services.sweep(grace=timedelta(seconds=30)) == 0


def test_the_sweeper_publishes_one_task_per_queue_not_one_per_delivery(tenant, other_tenant, client):
    first = make_queue(tenant, "https://example.com/a")
    second = make_queue(other_tenant, "https://example.com/b")
    import_orders(client, tenant, "a", "b", "c")
    import_orders(client, other_tenant, "x", "y")
    ExportDelivery.objects.update(handed_off_at=timezone.now() - timedelta(minutes=5))
    with (
        mock.patch.object(tasks.deliver, "apply_async") as deliver,
        mock.patch.object(tasks.deliver_cron, "apply_async") as deliver_cron,
    ):
        assert services.sweep() == 5
    published = sorted((args[0][0], sorted(args[0][1])) for args, _ in deliver.call_args_list)
    assert published == [
        (queue.pk, sorted(ExportDelivery.objects.filter(queue=queue).values_list("pk", flat=True)))
        for queue in sorted([first, second], key=lambda q: q.pk)
    ]
    assert not deliver_cron.called


def test_committed_deliveries_are_handed_over_one_task_per_queue(tenant, client, django_capture_on_commit_callbacks):
    queue = make_queue(tenant, "https://example.com/a")
    with (
        mock.patch.object(tasks.deliver, "apply_async") as deliver,
        django_capture_on_commit_callbacks(execute=True),
    ):
        import_orders(client, tenant, "a", "b", "c")
    pks = sorted(ExportDelivery.objects.values_list("pk", flat=True))
    assert [(args[0][0], sorted(args[0][1])) for args, _ in deliver.call_args_list] == [(queue.pk, pks)]


def test_a_queue_at_its_cap_gets_no_task_on_commit_and_its_sender_takes_the_delivery_next(
    tenant, client, allow_loopback, receiver, django_capture_on_commit_callbacks, settings
):
    settings.EXPORT_QUEUE_CONCURRENCY = 1
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "a")
    sending = ExportDelivery.objects.get()
    ExportDelivery.objects.update(attempts=1, lease_until=timezone.now() + timedelta(minutes=5))
    with (
        mock.patch.object(tasks.deliver, "apply_async") as deliver,
        django_capture_on_commit_callbacks(execute=True),
    ):
        import_orders(client, tenant, "b")
    assert not deliver.called  # a task would only find the queue at its cap
    # The sender, done with its send, leases the queue's next due delivery: the new one.
    ExportDelivery.objects.filter(pk=sending.pk).update(status=ExportStatus.SUCCESS, lease_until=None)
    assert len(services.deliver_queue(queue_id=queue.pk)) == 1
    assert len(receiver.received) == 1


def test_one_look_at_the_leases_of_every_queue_handed_off_skips_only_the_queue_at_its_cap(
    tenant, other_tenant, client, settings
):
    settings.EXPORT_QUEUE_CONCURRENCY = 1
    settings.EXPORT_ACCOUNT_WORKERS = 2  # the account's share is not what is looked at here
    busy = make_queue(tenant, "https://example.com/busy", name="busy")
    free = make_queue(other_tenant, "https://example.com/free", name="free")
    import_orders(client, tenant, "a")
    ExportDelivery.objects.filter(queue=busy).update(attempts=1, lease_until=timezone.now() + timedelta(minutes=5))
    import_orders(client, tenant, "b")
    import_orders(client, other_tenant, "c")
    waiting = {
        queue.pk: list(
            ExportDelivery.objects.filter(queue=queue, lease_until__isnull=True).values_list("pk", flat=True)
        )
        for queue in (busy, free)
    }
    with (
        mock.patch.object(tasks.deliver, "apply_async") as deliver,
        CaptureQueriesContext(connection) as queries,
    ):
        services.hand_off(waiting)
    assert [args[0][0] for args, _ in deliver.call_args_list] == [free.pk]
    assert len(queries) <= 3  # the queues' bounds and their leases, whatever the number of queues


def test_a_queue_of_an_account_at_its_share_gets_no_task_and_the_accounts_sender_takes_it_in_turn(
    tenant, client, allow_loopback, receiver, settings
):
    settings.EXPORT_ACCOUNT_WORKERS = 1
    sending = make_queue(tenant, receiver.url, name="sending")
    import_orders(client, tenant, "a")
    held = ExportDelivery.objects.get(queue=sending)
    waiting = make_queue(tenant, receiver.url, name="waiting")
    # Another process sends the account's first delivery: the account occupies its one worker process.
    ExportDelivery.objects.filter(pk=held.pk).update(
        attempts=1, lease_until=timezone.now() + timedelta(minutes=5), lease_owner="elsewhere:1"
    )
    liveness_row(name="elsewhere:1")
    ExportQueue.objects.filter(pk=sending.pk).update(enabled=False)
    import_orders(client, tenant, "b")
    ExportQueue.objects.filter(pk=sending.pk).update(enabled=True)
    new = ExportDelivery.objects.get(queue=waiting)
    with mock.patch.object(tasks.deliver, "apply_async") as deliver:
        services.hand_off({waiting.pk: [new.pk]})
    assert not deliver.called
    # A task for it all the same (the sweeper's) finds the account at its share and sends nothing.
    with mock.patch.object(liveness, "identity", return_value="zzz-later:2"):
        assert services.deliver_queue(queue_id=waiting.pk) == {}
    # The account's sender, done with its send, takes the account's other queue in turn.
    ExportDelivery.objects.filter(pk=held.pk).update(status=ExportStatus.SUCCESS, lease_until=None, lease_owner="")
    with mock.patch.object(liveness, "identity", return_value="elsewhere:1"):
        assert services.deliver_queue(queue_id=sending.pk) == {new.pk: ExportStatus.SUCCESS}
    assert len(receiver.received) == 1


def test_an_account_gets_no_more_tasks_on_commit_than_free_places_in_its_share(tenant, client, settings):
    first = make_queue(tenant, "https://example.com/a", name="a")
    second = make_queue(tenant, "https://example.com/b", name="b")
    import_orders(client, tenant, "a")
    waiting = {
        queue.pk: list(ExportDelivery.objects.filter(queue=queue).values_list("pk", flat=True))
        for queue in (first, second)
    }
    settings.EXPORT_ACCOUNT_WORKERS = 1
    with mock.patch.object(tasks.deliver, "apply_async") as deliver:
        services.hand_off(waiting)
    # One sender: it takes the account's other queue in turn (tested above).
    assert [args[0][0] for args, _ in deliver.call_args_list] == [min(first.pk, second.pk)]
    settings.EXPORT_ACCOUNT_WORKERS = 2
    with mock.patch.object(tasks.deliver, "apply_async") as deliver:
        services.hand_off(waiting)
    assert sorted(args[0][0] for args, _ in deliver.call_args_list) == sorted([first.pk, second.pk])


def test_the_first_senders_of_an_account_by_name_keep_its_share_and_a_later_one_takes_nothing(
    tenant, client, allow_loopback, receiver, settings
):
    settings.EXPORT_ACCOUNT_WORKERS = 1
    one = make_queue(tenant, receiver.url, name="one")
    two = make_queue(tenant, receiver.url, name="two")
    import_orders(client, tenant, "a", "b")
    first, second = ExportDelivery.objects.filter(queue=one).order_by("pk")
    ExportDelivery.objects.filter(pk=first.pk).update(
        attempts=1, lease_until=timezone.now() + timedelta(minutes=5), lease_owner="host:200"
    )
    liveness_row(name="host:200")
    with mock.patch.object(liveness, "identity", return_value="host:300"):
        assert services.deliver_queue(queue_id=one.pk) == {}  # after host:200 by name: beyond the share
    with mock.patch.object(liveness, "identity", return_value="host:100"):
        statuses = services.deliver_queue(queue_id=one.pk)  # before it: this queue, then the account's other
    assert statuses == dict.fromkeys(
        [second.pk, *ExportDelivery.objects.filter(queue=two).values_list("pk", flat=True)], ExportStatus.SUCCESS
    )


def test_the_share_is_a_part_of_the_live_worker_processes(settings):
    settings.EXPORT_ACCOUNT_WORKERS = 0
    settings.EXPORT_ACCOUNT_SHARE = 0.5
    leasing._live_workers.clear()
    for n in range(4):
        liveness_row(name=f"host:{n}")
    assert services.account_cap() == 2
    leasing._live_workers.clear()
    settings.EXPORT_ACCOUNT_SHARE = 0.1
    assert services.account_cap() == 1  # at least one
    leasing._live_workers.clear()


def liveness_row(*, name: str, seen: timedelta = timedelta(0)) -> None:
    at = timezone.now() - seen
    LiveProcess.objects.update_or_create(
        name=name,
        defaults={
            "kind": "worker",
            "hostname": name.split(":")[0],
            "pid": int(name.split(":")[1]),
            "started_at": at,
            "seen_at": at,
        },
    )


# --- leases of dead processes ---------------------------------------------------------------------------------


def test_the_sweeper_releases_a_dead_processes_lease_at_once_keeping_the_attempt(tenant, client, settings):
    settings.EXPORT_LEASE_SECONDS = 3600
    settings.EXPORT_ACCOUNT_WORKERS = 2  # the live process's lease leaves the account a place
    queue = make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a", "b")
    dead, alive = ExportDelivery.objects.order_by("pk")
    lease_until = timezone.now() + timedelta(minutes=50)
    ExportDelivery.objects.filter(pk=dead.pk).update(attempts=1, lease_until=lease_until, lease_owner="gone:1")
    ExportDelivery.objects.filter(pk=alive.pk).update(attempts=1, lease_until=lease_until, lease_owner="here:2")
    liveness_row(name="gone:1", seen=timedelta(seconds=settings.LIVENESS_TIMEOUT_SECONDS + 1))
    liveness_row(name="here:2")
    with mock.patch.object(tasks.deliver, "apply_async") as deliver:
        assert services.sweep(grace=timedelta(minutes=10)) == 1  # handed over without waiting for the grace
    assert [(args[0][0], args[0][1]) for args, _ in deliver.call_args_list] == [(queue.pk, [dead.pk])]
    dead.refresh_from_db()
    assert (dead.lease_until, dead.lease_owner, dead.attempts) == (None, "", 1)
    alive.refresh_from_db()
    assert (alive.lease_until, alive.lease_owner) == (lease_until, "here:2")  # a live process keeps its lease


def test_a_dead_processes_leases_take_no_place_in_the_queues_bound(tenant, client, allow_loopback, receiver, settings):
    settings.EXPORT_QUEUE_CONCURRENCY = 1
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "a", "b")
    held, waiting = ExportDelivery.objects.order_by("pk")
    ExportDelivery.objects.filter(pk=held.pk).update(
        attempts=1, lease_until=timezone.now() + timedelta(minutes=5), lease_owner="gone:1"
    )
    liveness_row(name="gone:1", seen=timedelta(seconds=settings.LIVENESS_TIMEOUT_SECONDS + 1))
    assert services.deliver_queue(queue_id=queue.pk) == {waiting.pk: ExportStatus.SUCCESS}
    with mock.patch.object(tasks.deliver, "apply_async") as deliver:
        services.hand_off({queue.pk: [waiting.pk]})
    assert deliver.called  # nor in the commit-time look at the caps


def test_a_cron_windows_lease_of_a_dead_process_is_handed_to_the_cron_task(tenant, client):
    queue = make_queue(tenant, "https://example.com/a", trigger="hourly")
    import_orders(client, tenant, "a")
    delivery = ExportDelivery.objects.create(
        account=tenant.account,
        queue=queue,
        delivery_id=services.new_delivery_id(),
        window="2026-11-27T10",
        next_attempt_at=timezone.now(),
        attempts=1,
        lease_until=timezone.now() + timedelta(minutes=5),
        lease_owner="gone:1",
    )
    with (
        mock.patch.object(tasks.deliver_cron, "apply_async") as deliver_cron,
        mock.patch.object(tasks.deliver, "apply_async") as deliver,
    ):
        assert services.sweep(grace=timedelta(minutes=10)) == 1  # never seen at all: dead
    assert [args[0][1] for args, _ in deliver_cron.call_args_list] == [[delivery.pk]]
    assert not deliver.called


def test_a_lease_names_the_process_that_took_it(tenant, client, allow_loopback, settings):
    make_queue(tenant, "http://127.0.0.1:9/hook")
    import_orders(client, tenant, "a")
    owners: list[str] = []

    def send(rendered: Any, *, delivery_id: str, **kwargs: Any) -> DeliveryResult:
        owners.append(ExportDelivery.objects.get(delivery_id=delivery_id).lease_owner)
        return DeliveryResult(ok=True, status_code=200)

    with (
        mock.patch.object(liveness, "identity", return_value="worker-host:4242"),
        mock.patch.object(DELIVERIES["webhook"], "deliver", side_effect=send),
    ):
        services.deliver(delivery_pk=ExportDelivery.objects.get().pk)
    assert owners == ["worker-host:4242"]
    assert ExportDelivery.objects.get().lease_owner == ""  # released with its outcome


# --- time limits ---------------------------------------------------------------------------------------------


def test_the_delivery_tasks_run_under_time_limits_shorter_than_the_lease(settings):
    for task in (tasks.deliver, tasks.deliver_cron):
        assert task.soft_time_limit == settings.EXPORT_TASK_SOFT_TIME_LIMIT
        assert task.time_limit == settings.EXPORT_TASK_TIME_LIMIT
        assert 0 < task.soft_time_limit < task.time_limit < settings.EXPORT_LEASE_SECONDS
        assert task.acks_late == settings.EXPORT_TASK_ACKS_LATE


@pytest.mark.parametrize(("broker", "acks_late"), [("filesystem://", "False"), ("redis://127.0.0.1:1/0", "True")])
def test_delivery_tasks_are_acknowledged_at_their_start_only_on_the_filesystem_transport(tmp_path, broker, acks_late):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EXPORT_", "CELERY_", "DJANGO_ENV"))}
    probe = "import django; django.setup(); from exports import tasks; print(tasks.deliver.acks_late)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={**base, "VAR_DIR": str(tmp_path), "CELERY_BROKER_URL": broker},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == acks_late


@pytest.mark.parametrize(
    ("soft", "hard", "lease"),
    [(300, 330, 330), (300, 700, 600), (330, 300, 600), (0, 10, 600)],
)
def test_a_lease_not_outliving_the_time_limits_is_a_deployment_error(settings, soft, hard, lease):
    settings.EXPORT_TASK_SOFT_TIME_LIMIT, settings.EXPORT_TASK_TIME_LIMIT, settings.EXPORT_LEASE_SECONDS = (
        soft,
        hard,
        lease,
    )
    assert [e.id for e in checks.delivery_time_limits()] == ["exports.E001"]
    assert "exports.E001" in [e.id for e in run_checks()]


def test_the_default_limits_pass_the_check():
    assert checks.delivery_time_limits() == []


def test_settings_refuse_to_load_with_a_lease_shorter_than_the_hard_time_limit(tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EXPORT_", "DJANGO_ENV"))}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "VAR_DIR": str(tmp_path), "EXPORT_LEASE_SECONDS": "60", "EXPORT_TASK_TIME_LIMIT": "90"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "EXPORT_TASK_TIME_LIMIT < EXPORT_LEASE_SECONDS" in done.stderr


def test_a_sender_that_yielded_after_sending_looks_at_its_accounts_due_deliveries_once_more(
    tenant, client, allow_loopback, receiver
):
    # Its account's first sender may have ended on "nothing due" just before a delivery committed whose
    # commit-time hand-off saw this sender's leases: without the second look it would wait for the sweeper.
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "a", "b")
    take = leasing.take_leases
    calls: list[Any] = []

    def take_leases(**kwargs: Any) -> Any:
        calls.append(kwargs["want"])
        if len(calls) == 2:
            return leasing.Busy.ACCOUNT_AT_CAP  # another sender of the account came first by name
        return take(**{**kwargs, "want": 1})

    with mock.patch.object(leasing, "take_leases", side_effect=take_leases):
        statuses = services.deliver_queue(queue_id=queue.pk)
    assert sorted(statuses.values()) == [ExportStatus.SUCCESS] * 2
    assert len(receiver.received) == 2
    # A sender that yielded before sending anything makes no second look: the senders it saw look after theirs.
    ExportDelivery.objects.update(status=ExportStatus.PENDING, lease_until=None)
    calls.clear()
    with mock.patch.object(leasing, "take_leases", return_value=leasing.Busy.ACCOUNT_AT_CAP) as refused:
        assert services.deliver_queue(queue_id=queue.pk) == {}
    assert refused.call_count == 1


def test_a_soft_limit_shorter_than_a_web_hooks_timeouts_warns_of_one_send_a_task(settings):
    # 10 s less the 2 s margin is shorter than a web hook's default 5 s connect + 15 s read.
    settings.EXPORT_TASK_SOFT_TIME_LIMIT, settings.EXPORT_TASK_TIME_LIMIT, settings.EXPORT_LEASE_SECONDS = 10, 11, 20
    warnings = checks.sends_per_task()
    assert [w.id for w in warnings] == ["exports.W002"]
    assert "webhook" in warnings[0].msg


def test_the_default_soft_limit_leaves_every_kind_its_timeouts():
    assert checks.sends_per_task() == []
