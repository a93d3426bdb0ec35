"""``manage.py replay_exports``: a queue's items of a time window go out again in new deliveries."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from typing import Any
from unittest import mock

import pytest
from django.core.management import CommandError, call_command

from exports import services
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from exports.services import enqueueing
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

DAY = datetime(2026, 3, 1, tzinfo=UTC)


def make_queue(tenant: Tenant, name: str = "erp", trigger: str = "realtime") -> ExportQueue:
    return ExportQueue.objects.create(
        account=tenant.account,
        name=name,
        entity_type="sales",
        trigger=trigger,
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )


def exported(queue: ExportQueue, key: str, at: datetime, status: str = ExportStatus.SUCCESS) -> ExportItem:
    """An item of ``queue`` created at ``at`` and delivered (or not, when pending) in a delivery of its own."""
    delivery = ExportDelivery.objects.create(
        account=queue.account,
        queue=queue,
        delivery_id=f"msg_original_{key}",
        status=status,
        next_attempt_at=at,
    )
    item = ExportItem.objects.create(
        account=queue.account, queue=queue, entity_type="sales", object_id=1, element_key=key, status=status
    )
    ExportItem.objects.filter(pk=item.pk).update(created_at=at, delivery=delivery)
    item.refresh_from_db()
    return item


def replay(*args: str, **options: Any) -> str:
    out = StringIO()
    with mock.patch.object(enqueueing, "hand_off") as hand_off:
        call_command("replay_exports", *args, stdout=out, **options)
    replay.hand_off = hand_off  # type: ignore[attr-defined]
    return out.getvalue()


def window_args(queue: ExportQueue | str, start: str = "2026-03-01T00:00:00Z", end: str = "2026-03-02T00:00:00Z"):
    ref = queue if isinstance(queue, str) else str(queue.pk)
    return ["--account", "acme", "--queue", ref, "--from", start, "--to", end]


def test_every_item_of_the_window_goes_out_again_with_a_new_delivery_id(tenant, django_capture_on_commit_callbacks):
    queue = make_queue(tenant)
    a = exported(queue, "a", DAY.replace(hour=9))
    b = exported(queue, "b", DAY.replace(hour=23, minute=59), status=ExportStatus.FAILURE)
    with django_capture_on_commit_callbacks(execute=True):
        output = replay(*window_args(queue))
    for item, original in ((a, "msg_original_a"), (b, "msg_original_b")):
        item.refresh_from_db()
        assert item.status == ExportStatus.PENDING
        assert item.delivery.delivery_id not in ("", original)
        assert item.delivery.status == ExportStatus.PENDING
    assert ExportDelivery.objects.count() == 4
    replay.hand_off.assert_called_once()  # type: ignore[attr-defined]
    assert "2 items in the window" in output and "replayed 2 items in 2 new deliveries" in output


def test_items_outside_the_window_are_left_alone(tenant):
    queue = make_queue(tenant)
    before = exported(queue, "before", datetime(2026, 2, 28, 23, 59, tzinfo=UTC))
    at_end = exported(queue, "end", datetime(2026, 3, 2, tzinfo=UTC))  # the end is excluded
    replay(*window_args(queue))
    for item in (before, at_end):
        item.refresh_from_db()
        assert (item.status, item.delivery.delivery_id.startswith("msg_original_")) == (ExportStatus.SUCCESS, True)


def test_a_pending_item_is_left_alone_and_counted(tenant):
    queue = make_queue(tenant)
    pending = exported(queue, "p", DAY.replace(hour=1), status=ExportStatus.PENDING)
    exported(queue, "done", DAY.replace(hour=2))
    output = replay(*window_args(queue))
    pending.refresh_from_db()
    assert pending.delivery.delivery_id == "msg_original_p"
    assert "1 still pending (left alone)" in output and "replayed 1 items" in output


def test_other_queues_are_left_alone(tenant):
    queue, other = make_queue(tenant), make_queue(tenant, "other")
    elsewhere = exported(other, "x", DAY.replace(hour=3))
    replay(*window_args(queue))
    elsewhere.refresh_from_db()
    assert elsewhere.delivery.delivery_id == "msg_original_x"


def test_a_dry_run_counts_and_changes_nothing(tenant):
    queue = make_queue(tenant)
    exported(queue, "a", DAY.replace(hour=9))
    output = replay(*window_args(queue), "--dry-run")
    assert "dry run: would replay 1 items" in output
    assert ExportDelivery.objects.count() == 1
    assert ExportItem.objects.get().status == ExportStatus.SUCCESS


def test_the_queue_is_found_by_name(tenant):
    queue = make_queue(tenant, "ERP sales")
    exported(queue, "a", DAY.replace(hour=9))
    assert "replayed 1 items" in replay(*window_args("ERP sales"))


def test_a_real_time_queue_is_replayed_in_batches(tenant):
    queue = make_queue(tenant)
    for key in "abcde":
        exported(queue, key, DAY.replace(hour=9))
    with mock.patch("exports.replay.services.retry_items", wraps=services.retry_items) as retry_items:
        output = replay(*window_args(queue), "--batch-size", "2")
    assert [len(call.kwargs["items"]) for call in retry_items.call_args_list] == [2, 2, 1]
    assert "replayed 5 items in 5 new deliveries" in output


def test_a_cron_queue_is_replayed_as_one_new_file_per_batch(tenant, django_capture_on_commit_callbacks):
    queue = make_queue(tenant, trigger="daily")
    for key in "abc":
        exported(queue, key, DAY.replace(hour=9))
    with django_capture_on_commit_callbacks(execute=True):
        output = replay(*window_args(queue), "--batch-size", "2")
    new = ExportDelivery.objects.filter(window__startswith="replay-")
    assert sorted(d.items.count() for d in new) == [1, 2]
    assert all(d.status == ExportStatus.PENDING for d in new)
    assert all(call.kwargs == {"cron": True} for call in replay.hand_off.call_args_list)  # type: ignore[attr-defined]
    assert "replayed 3 items in 2 new deliveries" in output


def test_a_date_without_a_time_or_zone_is_midnight_utc(tenant):
    queue = make_queue(tenant)
    exported(queue, "a", DAY.replace(hour=0))
    assert "replayed 1 items" in replay(*window_args(queue, "2026-03-01", "2026-03-02"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--account", "nobody", "--queue", "erp"], "no account"),
        (["--account", "acme", "--queue", "missing"], "no export queue"),
        (["--account", "acme", "--queue", "erp", "--from", "yesterday"], "--from"),
        (["--account", "acme", "--queue", "erp", "--from", "2026-13-45"], "--from"),
        (["--account", "acme", "--queue", "erp", "--from", "2026-03-02", "--to", "2026-03-01"], "before"),
        (["--account", "acme", "--queue", "erp", "--batch-size", "0"], "--batch-size"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(tenant, args, message):
    make_queue(tenant)
    defaults = {"--from": "2026-03-01", "--to": "2026-03-02"}
    for option, value in defaults.items():
        if option not in args:
            args = [*args, option, value]
    with pytest.raises(CommandError, match=message):
        replay(*args)


def test_another_accounts_queue_is_not_found(tenant, other_tenant):
    foreign = make_queue(other_tenant, "theirs")
    exported(foreign, "a", DAY.replace(hour=9))
    with pytest.raises(CommandError, match="no export queue"):
        replay(*window_args(str(foreign.pk)))
    with pytest.raises(CommandError, match="no export queue"):
        replay(*window_args("theirs"))
