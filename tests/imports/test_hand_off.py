"""After commit the queued items go to Celery; a lost hand-off is recovered by the sweeper."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from imports import services
from imports.models import ImportItem, ImportStatus
from orders.models import IncomingOrder
from tests.imports.conftest import order, post

pytestmark = pytest.mark.django_db


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

    monkeypatch.setattr(tasks.materialise_import_items, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        r = post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert r.status_code == 200
    assert ImportItem.objects.get().status == ImportStatus.PENDING


def test_the_sweeper_hands_over_items_pending_past_the_grace_period(tenant, client, eager_celery):
    post(client, tenant, "incoming_orders", {"orders": [order("old"), order("new")]}, stock_location="shop-1")
    ImportItem.objects.filter(identifier="old").update(created_at=timezone.now() - timedelta(minutes=5))
    assert services.sweep_pending(grace=timedelta(minutes=1)) == 1
    assert list(IncomingOrder.objects.values_list("order_identifier", flat=True)) == ["old"]
    assert ImportItem.objects.get(identifier="new").status == ImportStatus.PENDING


def test_a_rolled_back_request_queues_nothing(tenant, client, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("crash inside the transaction")

    monkeypatch.setattr(services.transaction, "on_commit", explode)
    with pytest.raises(RuntimeError):
        post(client, tenant, "incoming_orders", {"orders": [order("a")]}, stock_location="shop-1")
    assert not ImportItem.objects.exists()
