"""Retention: logs go after their period, in batches; pending work and entities stay."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from exports import retention as export_retention
from exports import tasks as export_tasks
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from imports import retention as import_retention
from imports import tasks as import_tasks
from imports.models import ImportItem, ImportStatus
from integrations import retention as integration_retention
from integrations.models import IntegrationCall
from orders.models import IncomingOrder
from tests.factories import ImportItemFactory, IncomingOrderFactory
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def days_ago(days: float) -> Any:
    return timezone.now() - timedelta(days=days)


def make_queue(tenant: Tenant, name: str = "erp") -> ExportQueue:
    return ExportQueue.objects.create(
        account=tenant.account,
        name=name,
        entity_type="sales",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )


def make_log(
    queue: ExportQueue, status: str, *, finished_days: float | None, created_days: float = 0, attempts: int = 1
) -> ExportItem:
    """An item in a delivery with ``attempts`` attempts; the delivery finished ``finished_days`` ago (None: still
    pending)."""
    finished = None if finished_days is None else days_ago(finished_days)
    delivery = ExportDelivery.objects.create(
        account=queue.account,
        queue=queue,
        delivery_id=f"msg_{ExportDelivery.objects.count()}_{status}",
        status=status,
        next_attempt_at=timezone.now(),
        finished_at=finished,
    )
    for number in range(1, attempts + 1):
        ExportAttempt.objects.create(
            account=queue.account,
            delivery=delivery,
            number=number,
            ok=status == ExportStatus.SUCCESS,
            duration_ms=5,
            started_at=finished or timezone.now(),
        )
    item = ExportItem.objects.create(
        account=queue.account, queue=queue, entity_type="sales", object_id=1, element_key="s-1", status=status
    )
    ExportItem.objects.filter(pk=item.pk).update(delivery=delivery, created_at=days_ago(created_days))
    item.refresh_from_db()
    return item


def test_a_success_log_goes_after_14_days_with_its_delivery_and_attempts(tenant):
    queue = make_queue(tenant)
    old = make_log(queue, ExportStatus.SUCCESS, finished_days=15, attempts=2)
    recent = make_log(queue, ExportStatus.SUCCESS, finished_days=13)
    counts = export_retention.prune_export_logs()
    assert counts == {"items": 1, "deliveries": 1, "attempts": 2}
    assert list(ExportItem.objects.all()) == [recent]
    assert not ExportDelivery.objects.filter(pk=old.delivery_id).exists()
    assert ExportAttempt.objects.count() == 1


def test_a_skipped_item_is_a_success_log(tenant):
    make_log(make_queue(tenant), ExportStatus.SKIPPED, finished_days=15)
    assert export_retention.prune_export_logs()["items"] == 1


def test_a_failure_log_is_kept_90_days(tenant):
    queue = make_queue(tenant)
    make_log(queue, ExportStatus.FAILURE, finished_days=89, attempts=5)
    old = make_log(queue, ExportStatus.FAILURE, finished_days=91, attempts=5)
    assert export_retention.prune_export_logs() == {"items": 1, "deliveries": 1, "attempts": 5}
    assert not ExportItem.objects.filter(pk=old.pk).exists()
    assert ExportAttempt.objects.count() == 5


def test_success_is_aged_from_the_end_of_the_delivery_not_the_creation_of_the_item(tenant):
    # Replayed last week, queued a year ago: the replay's log stays its 14 days.
    make_log(make_queue(tenant), ExportStatus.SUCCESS, finished_days=7, created_days=365)
    assert export_retention.prune_export_logs()["items"] == 0


def test_pending_items_and_pending_deliveries_are_never_deleted(tenant):
    queue = make_queue(tenant)
    item = make_log(queue, ExportStatus.PENDING, finished_days=None, created_days=400, attempts=3)
    ExportDelivery.objects.update(created_at=days_ago(400), next_attempt_at=days_ago(400))
    assert export_retention.prune_export_logs() == {"items": 0, "deliveries": 0, "attempts": 0}
    assert ExportItem.objects.get() == item
    assert ExportAttempt.objects.count() == 3


def test_a_delivery_is_kept_while_an_item_of_it_is_kept(tenant):
    queue = make_queue(tenant)
    item = make_log(queue, ExportStatus.SUCCESS, finished_days=20)
    # The item was re-sent and is on its way again, still pointing at the old, finished delivery.
    ExportItem.objects.filter(pk=item.pk).update(status=ExportStatus.PENDING)
    assert export_retention.prune_export_logs()["deliveries"] == 0
    assert ExportDelivery.objects.filter(pk=item.delivery_id).exists()


def test_an_old_failed_delivery_whose_item_was_retried_elsewhere_goes_alone(tenant):
    queue = make_queue(tenant)
    failed = make_log(queue, ExportStatus.FAILURE, finished_days=100)
    retried = make_log(queue, ExportStatus.SUCCESS, finished_days=1)
    ExportItem.objects.filter(pk=failed.pk).update(delivery=retried.delivery, status=ExportStatus.SUCCESS)
    assert export_retention.prune_export_logs() == {"items": 0, "deliveries": 1, "attempts": 1}
    assert ExportItem.objects.count() == 2


def test_zero_days_keeps_a_log_for_ever(tenant, settings):
    settings.RETENTION_SUCCESS_DAYS = 0
    make_log(make_queue(tenant), ExportStatus.SUCCESS, finished_days=3650)
    assert export_retention.prune_export_logs()["items"] == 0


def test_the_periods_come_from_the_settings(tenant, settings):
    settings.RETENTION_SUCCESS_DAYS = 2
    make_log(make_queue(tenant), ExportStatus.SUCCESS, finished_days=3)
    assert export_retention.prune_export_logs()["items"] == 1


def test_rows_are_deleted_in_batches_of_the_batch_size(tenant, settings):
    settings.RETENTION_BATCH_SIZE = 2
    queue = make_queue(tenant)
    for _ in range(5):
        make_log(queue, ExportStatus.SUCCESS, finished_days=30)
    with CaptureQueriesContext(connection) as queries:
        counts = export_retention.prune_export_logs()
    assert counts == {"items": 5, "deliveries": 5, "attempts": 5}
    item_deletes = [q["sql"] for q in queries if q["sql"].startswith('DELETE FROM "exports_exportitem"')]
    assert len(item_deletes) == 3  # 2 + 2 + 1, each its own statement (and transaction)


def test_an_import_log_goes_after_30_days_whatever_its_outcome(tenant):
    kept_pending = ImportItemFactory(account=tenant.account, integration=tenant.integration)
    recent = ImportItemFactory(account=tenant.account, integration=tenant.integration, status=ImportStatus.SUCCESS)
    for status in (ImportStatus.SUCCESS, ImportStatus.FAILURE, ImportStatus.REJECTED):
        ImportItemFactory(account=tenant.account, integration=tenant.integration, status=status)
    ImportItem.objects.exclude(pk=recent.pk).update(created_at=days_ago(31))
    assert import_retention.prune_import_logs() == 3
    assert set(ImportItem.objects.all()) == {kept_pending, recent}


def test_pruning_the_import_log_keeps_the_orders_it_created(tenant):
    order = IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location)
    ImportItemFactory(account=tenant.account, integration=tenant.integration, status=ImportStatus.SUCCESS)
    ImportItem.objects.update(created_at=days_ago(60))
    assert import_retention.prune_import_logs() == 1
    assert IncomingOrder.objects.get() == order


def test_integration_calls_go_after_14_days_when_ok_and_90_when_failed(tenant):
    def call(ok: bool, age: float) -> IntegrationCall:
        made = IntegrationCall.objects.create(account=tenant.account, kind="customer_lookup", ok=ok, duration_ms=3)
        IntegrationCall.objects.filter(pk=made.pk).update(created_at=days_ago(age))
        return made

    call(True, 15)
    kept = {call(True, 13), call(False, 30)}
    call(False, 91)
    assert integration_retention.prune_integration_calls() == 2
    assert set(IntegrationCall.objects.all()) == kept


def test_the_retention_tasks_run_the_services(tenant):
    make_log(make_queue(tenant), ExportStatus.SUCCESS, finished_days=15)
    ImportItemFactory(account=tenant.account, integration=tenant.integration, status=ImportStatus.FAILURE)
    ImportItem.objects.update(created_at=days_ago(31))
    assert export_tasks.prune_export_logs.apply().get() == {"items": 1, "deliveries": 1, "attempts": 1}
    assert import_tasks.prune_import_logs.apply().get() == 1


def test_beat_runs_every_retention_task_once_a_day(settings):
    from celery.schedules import crontab

    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    for task in (
        "exports.tasks.prune_export_logs",
        "imports.tasks.prune_import_logs",
        "integrations.tasks.prune_integration_calls",
    ):
        assert isinstance(schedule[task], crontab)
        assert len(schedule[task].hour) == 1 and len(schedule[task].minute) == 1
