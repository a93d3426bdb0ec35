"""Cron windows (exactly once per window) and the sweeper (nothing stranded)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from unittest import mock

import pytest
from django.utils import timezone

from exports import services
from exports.models import ExportDelivery, ExportItem
from exports.services import enqueueing
from tests.support.imports import import_orders
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db


def test_an_hourly_queue_sends_every_waiting_item_in_one_delivery_once_per_window(tenant, client):
    make_queue(tenant, "https://example.com/a", trigger="hourly")
    import_orders(client, tenant, "a", "b", "c")
    at = datetime(2026, 11, 22, 14, 5, tzinfo=UTC)
    assert services.run_cron(now=at) == 1
    delivery = ExportDelivery.objects.get()
    assert (delivery.window, delivery.items.count()) == ("2026-11-22T14", 3)
    import_orders(client, tenant, "d")
    assert services.run_cron(now=at + timedelta(minutes=30)) == 0  # same window: never a second delivery
    assert services.run_cron(now=at + timedelta(hours=1)) == 1
    assert ExportDelivery.objects.order_by("id").last().items.get().element_key.startswith("d:")


def test_a_window_without_waiting_items_sends_nothing(tenant):
    make_queue(tenant, "https://example.com/a", trigger="hourly")
    assert services.run_cron(now=timezone.now()) == 0
    assert not ExportDelivery.objects.exists()


def test_a_daily_queue_runs_at_its_local_time_in_the_account_time_zone(tenant, client):
    tenant.account.timezone = "Europe/Copenhagen"
    tenant.account.save()
    make_queue(tenant, "https://example.com/a", trigger="daily", daily_at=time(6, 0))
    import_orders(client, tenant, "a")
    assert services.run_cron(now=datetime(2026, 11, 22, 4, 59, tzinfo=UTC)) == 0  # 05:59 in Copenhagen
    assert services.run_cron(now=datetime(2026, 11, 22, 5, 0, tzinfo=UTC)) == 1  # 06:00
    assert ExportDelivery.objects.get().window == "2026-11-22"
    import_orders(client, tenant, "b")
    assert services.run_cron(now=datetime(2026, 11, 22, 20, 0, tzinfo=UTC)) == 0


def test_a_disabled_queue_gets_no_items(tenant, client):
    make_queue(tenant, "https://example.com/a", enabled=False)
    import_orders(client, tenant, "a")
    assert not ExportItem.objects.exists()


def test_the_sweeper_hands_over_a_lost_first_attempt_after_the_grace_period(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    with mock.patch.object(enqueueing, "hand_off") as hand_off:
        assert services.sweep(grace=timedelta(minutes=1)) == 0
        ExportDelivery.objects.update(handed_off_at=timezone.now() - timedelta(minutes=2))
        assert services.sweep(grace=timedelta(minutes=1)) == 1
    delivery = ExportDelivery.objects.get()
    hand_off.assert_called_with({delivery.queue_id: [delivery.pk]})


def test_the_sweeper_takes_up_a_delivery_whose_worker_died(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    past = timezone.now() - timedelta(minutes=5)
    ExportDelivery.objects.update(handed_off_at=past, attempts=1, lease_until=timezone.now() + timedelta(minutes=5))
    with mock.patch.object(enqueueing, "hand_off"):
        assert services.sweep() == 0  # leased: a worker is on it
        ExportDelivery.objects.update(lease_until=past)
        assert services.sweep() == 1  # the lease ran out: the worker died


def test_the_sweeper_leaves_retries_until_their_time(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    ExportDelivery.objects.update(
        attempts=1,
        next_attempt_at=timezone.now() + timedelta(minutes=1),
        handed_off_at=timezone.now() - timedelta(minutes=5),
    )
    with mock.patch.object(enqueueing, "hand_off"):
        assert services.sweep() == 0
        ExportDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        assert services.sweep() == 1


def test_retrying_items_sends_them_again_under_a_new_delivery_id(tenant, client):
    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    ExportItem.objects.update(status="failure")
    item = ExportItem.objects.get()
    first = item.delivery.delivery_id
    assert services.retry_items(account=tenant.account, items=[item]) == 1
    item.refresh_from_db()
    assert item.delivery.delivery_id != first
    assert item.status == "pending"


def test_a_pending_item_is_not_retried(tenant, client):
    from core.errors import Conflict

    make_queue(tenant, "https://example.com/a")
    import_orders(client, tenant, "a")
    with pytest.raises(Conflict):
        services.retry_items(account=tenant.account, items=[ExportItem.objects.get()])


def test_a_web_hook_queue_without_a_secret_gets_one_shown_once(tenant):
    queue, secret = services.create_queue(
        account=tenant.account,
        name="q",
        entity_type="outgoing_orders",
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )
    assert secret is not None and secret.startswith("whsec_")
    assert queue.delivery["secret"] == secret
    _, again = services.update_queue(
        account=tenant.account, queue=queue, delivery={"type": "webhook", "url": "https://example.com/other"}
    )
    assert again is None
    queue.refresh_from_db()
    assert queue.delivery["secret"] == secret  # left out on update: kept


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"entity_type": "invoices"}, "entity_type"),
        ({"trigger": "weekly"}, "trigger"),
        ({"transform": {"type": "xslt"}}, "transform.type"),
        ({"delivery": {"type": "pigeon"}}, "delivery.type"),
        ({"delivery": {"type": "webhook", "url": "ftp://x"}}, "delivery.url"),
        ({"delivery": {"type": "webhook", "url": "https://x", "secret": "nope"}}, "delivery.secret"),
        ({"filters": {"colour": ["red"]}}, "filters.colour"),
    ],
)
def test_a_configuration_that_cannot_work_is_refused_naming_the_field(tenant, fields, field):
    from core.errors import ServiceError

    values = {"name": "q", "entity_type": "outgoing_orders", "delivery": {"type": "webhook", "url": "https://x"}}
    values.update(fields)
    with pytest.raises(ServiceError) as refused:
        services.create_queue(account=tenant.account, **values)
    assert refused.value.field == field
