"""After commit the queued items go to Celery; a lost hand-off is recovered by the sweeper."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from imports import services
from imports.models import ImportItem, ImportStatus
from orders.models import IncomingOrder
from tests.support.imports import order, post

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _only_the_tests_processes() -> None:
    """The sweeper reads every process's heartbeat: the rows real processes of the session (an end-to-end test's
    Celery worker, on this database) left would change what it hands over. A test sees the processes it makes."""
    from core.models import LiveProcess

    LiveProcess.objects.all().delete()


def test_committed_items_are_handed_to_celery_and_materialised(
    tenant, client, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        post(client, tenant, "incoming_orders", {"orders": [order("a"), order("b")]}, stock_location="shop-1")
    assert len(callbacks) == 1
    assert IncomingOrder.objects.count() == 2
    assert set(ImportItem.objects.values_list("status", flat=True)) == {ImportStatus.SUCCESS}


def test_a_broker_failure_at_hand_off_loses_nothing_and_answers_200(
    tenant, client, monkeypatch, django_capture_on_commit_callbacks
):
    from imports import tasks

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.materialise_import_items, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert r.status_code == 200
    assert ImportItem.objects.get().status == ImportStatus.PENDING


def test_the_sweeper_hands_over_only_items_pending_past_the_grace_period(tenant, client, monkeypatch):
    from imports import tasks

    post(client, tenant, "incoming_orders", {"orders": [order("old"), order("new")]}, stock_location="shop-1")
    ImportItem.objects.filter(identifier="old").update(created_at=timezone.now() - timedelta(minutes=5))
    handed: list[tuple[int, list[int]]] = []
    monkeypatch.setattr(tasks.materialise_import_items, "apply_async", lambda args, **options: handed.append(args))

    assert services.sweep_pending(grace=timedelta(minutes=1)) == 1
    assert handed == [(tenant.account.pk, [ImportItem.objects.get(identifier="old").pk])]


def test_after_a_worker_process_died_the_sweeper_hands_over_every_pending_item_once(tenant, client, monkeypatch):
    """A worker killed with the message of a hand-off leaves its items pending with no task in sight; once its
    heartbeat is stale the next sweep hands over every pending item, young ones included, and forgets the dead
    process (the sweep after it is back to the grace period)."""
    from core.models import LiveProcess
    from imports import tasks

    post(client, tenant, "incoming_orders", {"orders": [order("young")]}, stock_location="shop-1")
    handed: list[tuple[int, list[int]]] = []
    monkeypatch.setattr(tasks.materialise_import_items, "apply_async", lambda args, **options: handed.append(args))
    long_ago = timezone.now() - timedelta(minutes=1)
    LiveProcess.objects.create(
        name="m2:41", kind="worker", hostname="m2", pid=41, started_at=long_ago, seen_at=long_ago
    )
    LiveProcess.objects.create(
        name="m1:7", kind="worker", hostname="m1", pid=7, started_at=long_ago, seen_at=timezone.now()
    )

    assert services.sweep_pending(grace=timedelta(minutes=1)) == 1
    assert handed == [(tenant.account.pk, [ImportItem.objects.get(identifier="young").pk])]
    assert list(LiveProcess.objects.values_list("name", flat=True)) == ["m1:7"]
    assert services.sweep_pending(grace=timedelta(minutes=1)) == 0


def test_a_task_materialises_the_pending_items_of_other_requests_of_its_account_once(tenant, other_tenant, client):
    """What the sweeper and the hand-off rely on: whichever task takes an item, it is materialised exactly once,
    and a task never takes another account's items."""
    post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    post(client, tenant, "incoming_orders", {"orders": [order("b")]}, stock_location="shop-1")
    post(client, other_tenant, "incoming_orders", {"orders": [order("c")]}, stock_location="shop-1")
    first = ImportItem.objects.get(identifier="a").pk
    second = ImportItem.objects.get(identifier="b").pk

    assert services.materialise_items(account_id=tenant.account.pk, item_ids=[first]) == 2
    assert services.materialise_items(account_id=tenant.account.pk, item_ids=[second]) == 0
    assert sorted(IncomingOrder.objects.values_list("order_identifier", flat=True)) == ["a", "b"]
    assert ImportItem.objects.get(identifier="b").status == ImportStatus.SUCCESS
    assert ImportItem.objects.get(identifier="c").status == ImportStatus.PENDING


def test_a_rolled_back_request_queues_nothing(tenant, client, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("crash inside the transaction")

    monkeypatch.setattr(services.transaction, "on_commit", explode)
    with pytest.raises(RuntimeError):
        post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert not ImportItem.objects.exists()


def test_a_task_takes_its_own_items_then_its_accounts_oldest_up_to_its_batch(tenant, client, monkeypatch):
    """Items whose message was lost (the sweeper's, later) never hold back a new request's items."""
    monkeypatch.setattr(services, "MATERIALISE_BATCH", 2)
    post(client, tenant, "incoming_orders", {"orders": [order("a"), order("b"), order("c")]}, stock_location="shop-1")
    newest = ImportItem.objects.get(identifier="c").pk

    assert services.materialise_items(account_id=tenant.account.pk, item_ids=[newest]) == 2
    assert ImportItem.objects.get(identifier="c").status == ImportStatus.SUCCESS
    assert ImportItem.objects.get(identifier="a").status == ImportStatus.SUCCESS
    assert ImportItem.objects.get(identifier="b").status == ImportStatus.PENDING
    assert services.materialise_items(account_id=tenant.account.pk, item_ids=[newest]) == 1
    assert sorted(IncomingOrder.objects.values_list("order_identifier", flat=True)) == ["a", "b", "c"]
