"""Real-time web hook delivery against a real receiver on 127.0.0.1 (spec: Events, Outcome and retry)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportStatus
from tests.support.imports import import_orders
from tests.support.queues import SECRET, make_queue
from tests.support.receivers import closed_port

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_retries(settings):
    settings.EXPORT_RETRY_BASE_DELAY = 0.01


def deliver_until_final(delivery: ExportDelivery, limit: int = 10) -> str | None:
    """Run the delivery as the worker and sweeper would, retries included, until it is final."""
    status = None
    for _ in range(limit):
        ExportDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        status = services.deliver(delivery_pk=delivery.pk)
        if status != ExportStatus.PENDING:
            return status
    return status


def test_the_receiver_gets_the_wrapper_signed_the_standard_webhooks_way(tenant, client, allow_loopback, receiver):
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    [got] = receiver.received
    item = ExportItem.objects.get()
    body = json.loads(got.body)
    assert list(body) == [item.element_key]
    assert body[item.element_key]["order"]["order_identifier"] == "web-1"
    assert body[item.element_key]["state"]["order_state"] == "created"
    assert got.headers["webhook-id"] == delivery.delivery_id
    assert got.headers["X-Shop"] == "acme"
    assert got.headers["Content-Type"] == "application/json"
    Webhook(SECRET).verify(got.body, got.headers)  # raises when the signature does not verify
    item.refresh_from_db()
    assert item.status == ExportStatus.SUCCESS
    attempt = ExportAttempt.objects.get()
    assert (attempt.number, attempt.ok, attempt.status_code) == (1, True, 200)


def test_a_tampered_body_does_not_verify(tenant, client, allow_loopback, receiver):
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    services.deliver(delivery_pk=ExportDelivery.objects.get().pk)
    [got] = receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(got.body + b" ", got.headers)


def test_503_twice_then_200_is_delivered_on_the_third_attempt(tenant, client, allow_loopback, receiver):
    receiver.script = [503, 503]
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.PENDING
    delivery.refresh_from_db()
    assert delivery.next_attempt_at > timezone.now() - timedelta(seconds=1)  # the retry time is in the database
    assert deliver_until_final(delivery) == ExportStatus.SUCCESS
    assert len(receiver.received) == 3
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1  # one delivery id: receivers dedupe
    assert list(ExportAttempt.objects.values_list("status_code", flat=True)) == [503, 503, 200]


@pytest.mark.parametrize("status", [503, 522, 524])
def test_a_retryable_status_is_tried_five_times_in_all_then_fails(tenant, client, allow_loopback, receiver, status):
    receiver.script = [status] * 10
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert deliver_until_final(delivery) == ExportStatus.FAILURE
    assert len(receiver.received) == 5
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code) == (5, status)
    item = ExportItem.objects.get()
    assert item.status == ExportStatus.FAILURE
    assert item.message.startswith(f"HTTP {status}")


@pytest.mark.parametrize("status", [400, 401, 404, 500, 502])
def test_other_statuses_fail_at_once(tenant, client, allow_loopback, receiver, status):
    receiver.script = [status]
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    assert deliver_until_final(ExportDelivery.objects.get()) == ExportStatus.FAILURE
    assert len(receiver.received) == 1


def test_a_redirect_is_not_followed(tenant, client, allow_loopback, receiver):
    receiver.script = [302]
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    assert deliver_until_final(ExportDelivery.objects.get()) == ExportStatus.FAILURE
    assert ExportDelivery.objects.get().status_code == 302


def test_a_refused_connection_is_retried(tenant, client, allow_loopback):
    make_queue(tenant, f"http://127.0.0.1:{closed_port()}/hook")
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert deliver_until_final(delivery) == ExportStatus.FAILURE
    delivery.refresh_from_db()
    assert delivery.attempts == 5
    assert delivery.error == "connection refused"


def test_a_timeout_is_retried(tenant, client, allow_loopback, receiver):
    receiver.script = ["sleep:1.5", 200]
    make_queue(tenant, receiver.url, delivery={"read_timeout": 0.5})
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert deliver_until_final(delivery) == ExportStatus.SUCCESS
    assert list(ExportAttempt.objects.values_list("error", flat=True)) == ["timeout", ""]


def test_a_cron_delivery_is_not_retried(tenant, client, allow_loopback, receiver):
    receiver.script = [503]
    make_queue(tenant, receiver.url, trigger="hourly")
    import_orders(client, tenant, "web-1")
    assert services.run_cron() == 1
    assert deliver_until_final(ExportDelivery.objects.get()) == ExportStatus.FAILURE
    assert len(receiver.received) == 1


def test_loopback_is_refused_unless_allowed(tenant, client, receiver, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    make_queue(tenant, receiver.url.replace("http://", "https://"))
    import_orders(client, tenant, "web-1")
    assert deliver_until_final(ExportDelivery.objects.get()) == ExportStatus.FAILURE
    assert ExportDelivery.objects.get().error.startswith("destination refused")
    assert receiver.received == []


def test_bearer_and_basic_auth_are_sent(tenant, client, allow_loopback, receiver):
    make_queue(tenant, receiver.url, name="bearer", delivery={"auth": {"type": "bearer", "token": "t0k"}})
    make_queue(
        tenant, receiver.url, name="basic", delivery={"auth": {"type": "basic", "username": "u", "password": "p"}}
    )
    import_orders(client, tenant, "web-1")
    for delivery in ExportDelivery.objects.all():
        services.deliver(delivery_pk=delivery.pk)
    assert sorted(r.headers["Authorization"] for r in receiver.received) == ["Basic dTpw", "Bearer t0k"]


def test_an_entity_that_no_longer_exists_is_skipped_not_failed(tenant, client, allow_loopback, receiver):
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    ExportItem.objects.update(object_id=10**9)
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SKIPPED
    assert ExportItem.objects.get().status == ExportStatus.SKIPPED
    assert receiver.received == []


def test_a_delivery_is_taken_once_even_when_handed_over_twice(tenant, client, allow_loopback, receiver):
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    assert services.deliver(delivery_pk=delivery.pk) is None
    assert len(receiver.received) == 1


def test_one_task_sends_its_queues_due_realtime_deliveries_one_element_each_but_never_a_cron_window(
    tenant, client, allow_loopback, receiver
):
    realtime = make_queue(tenant, receiver.url, name="realtime")
    make_queue(tenant, receiver.url, name="hourly", trigger="hourly")
    import_orders(client, tenant, "a", "b", "c")
    assert services.run_cron() == 1
    cron = ExportDelivery.objects.exclude(window="").get()
    first, *others = ExportDelivery.objects.filter(window="").order_by("pk")
    statuses = services.deliver_queue(queue_id=realtime.pk, delivery_pks=[first.pk])
    assert statuses == {d.pk: ExportStatus.SUCCESS for d in [first, *others]}
    assert len(receiver.received) == 3  # each real-time export still carries exactly one element
    assert all(len(json.loads(r.body)) == 1 for r in receiver.received)
    assert [services.deliver(delivery_pk=o.pk) for o in others] == [None, None]  # already sent
    cron.refresh_from_db()
    assert (cron.status, cron.attempts) == (ExportStatus.PENDING, 0)
