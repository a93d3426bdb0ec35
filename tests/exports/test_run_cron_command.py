"""``manage.py run_cron_exports``: the due cron windows started now, and what was started printed."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from exports.models import ExportDelivery, ExportItem, ExportStatus
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db


def waiting_item(queue, key: str) -> ExportItem:
    return ExportItem.objects.create(
        account=queue.account, queue=queue, entity_type=queue.entity_type, object_id=1, element_key=key
    )


def run() -> str:
    out = StringIO()
    call_command("run_cron_exports", stdout=out)
    return out.getvalue()


def test_it_starts_each_due_window_once_and_prints_it(tenant) -> None:
    hourly = make_queue(tenant, "https://example.com/a", trigger="hourly", name="ERP hourly")
    for key in ("a", "b", "c"):
        waiting_item(hourly, key)
    make_queue(tenant, "https://example.com/b", trigger="hourly", name="nothing waiting")
    make_queue(tenant, "https://example.com/c", trigger="realtime", name="real time")

    printed = run()

    delivery = ExportDelivery.objects.get()
    assert delivery.queue == hourly
    assert delivery.items.count() == 3
    assert printed.splitlines() == [
        "Started 1 cron export window:",
        f"  {tenant.account.identifier} / ERP hourly: window {delivery.window}, 3 items, "
        f"delivery {delivery.delivery_id}",
    ]


def test_a_window_already_started_is_not_started_again(tenant) -> None:
    hourly = make_queue(tenant, "https://example.com/a", trigger="hourly")
    waiting_item(hourly, "a")
    run()
    waiting_item(hourly, "b")  # waits for the next window

    assert run().startswith("No cron export was due")
    assert ExportDelivery.objects.count() == 1
    assert ExportItem.objects.get(element_key="b").status == ExportStatus.PENDING
