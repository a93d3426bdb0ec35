"""The outcomes of attempts written in one transaction: attempts, deliveries, items, the breaker's counts;
retries due soon handed back after commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import assert_never

from django.db import transaction
from django.utils import timezone

from exports import circuit
from exports.deliveries.base import short_answer, short_sent
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportStatus
from exports.services import attempts, enqueueing
from exports.services.outcomes import Attempted, Delivered, DeliveryOutcome, Failed, GaveUp, Paused, Skipped

# What recording an outcome changes on its delivery (one bulk update for all of them).
DELIVERY_FIELDS = [
    "status",
    "status_code",
    "error",
    "duration_ms",
    "lease_until",
    "lease_owner",
    "next_attempt_at",
    "finished_at",
    "paused_until",
    "pause_reason",
    "handed_off_at",
]
# A retry due within this long is handed to Celery with a countdown; a later one waits for the sweeper.
HAND_BACK_SECONDS = 60


def record(outcomes: Sequence[DeliveryOutcome]) -> None:
    """Every outcome in one transaction: attempts, deliveries, items; retries handed back after commit."""
    now = timezone.now()
    with transaction.atomic():
        ExportAttempt.objects.bulk_create([_attempt_row(o) for o in outcomes if not isinstance(o, Paused)])
        for outcome in outcomes:
            _settle(outcome, now)
        ExportDelivery.objects.bulk_update([o.delivery for o in outcomes], DELIVERY_FIELDS)
        circuit.give_back_attempts(o.delivery.pk for o in outcomes if isinstance(o, Paused))
        _settle_items(outcomes)
        circuit.note_outcomes((o.delivery.queue, o.result) for o in outcomes if not isinstance(o, Skipped))
        for outcome in outcomes:
            retry_in = _handed_back(outcome)
            if retry_in is not None:
                delivery = outcome.delivery
                transaction.on_commit(
                    partial(
                        enqueueing.hand_off,
                        {delivery.queue_id: [delivery.pk]},
                        retry_in.total_seconds(),
                        cron=bool(delivery.window),
                    )
                )


def _attempt_row(outcome: Attempted) -> ExportAttempt:
    delivery, result = outcome.delivery, outcome.result
    return ExportAttempt(
        account_id=delivery.account_id,
        delivery=delivery,
        number=delivery.attempts,
        ok=result.ok,
        status_code=result.status_code,
        error=result.error[:2000],
        duration_ms=outcome.duration_ms,
        started_at=outcome.started,
        sent=short_sent(result.sent),
        answer=short_answer(result.answer),
    )


def _settle(outcome: DeliveryOutcome, now: datetime) -> None:
    """The delivery's fields after the outcome (saved by the caller): its lease ended; a paused delivery waits for
    its destination, a failed one for its retry, the others are finished."""
    delivery = outcome.delivery
    delivery.lease_owner = ""
    match outcome:
        case Paused():
            circuit.pause(delivery, outcome.result)
        case Failed():
            _take_result(outcome)
            delivery.next_attempt_at = now + outcome.retry_in
            if _handed_back(outcome) is not None:
                delivery.handed_off_at = delivery.next_attempt_at  # its task runs then: the sweeper leaves it until
        case Delivered() | Skipped() | GaveUp():
            _take_result(outcome)
            delivery.finished_at = now
        case _:
            assert_never(outcome)


def _take_result(outcome: Attempted) -> None:
    delivery = outcome.delivery
    delivery.paused_until, delivery.pause_reason = None, ""
    delivery.status = outcome.status
    delivery.status_code = outcome.result.status_code
    delivery.error = outcome.result.error[:2000]
    delivery.duration_ms = outcome.duration_ms
    delivery.lease_until = None


def _settle_items(outcomes: Sequence[DeliveryOutcome]) -> None:
    """The items of the finished deliveries take their delivery's outcome (a success for a skipped delivery),
    the skipped ones their reasons; updated together by status and message, a page of ids at a time."""
    by_status: dict[tuple[str, str], list[int]] = {}
    status: str
    for outcome in outcomes:
        match outcome:
            case Delivered() | Skipped():
                status = ExportStatus.SUCCESS
            case GaveUp():
                status = ExportStatus.FAILURE
            case Failed() | Paused():
                continue  # a retry or a pause: its items stay pending
            case _:
                assert_never(outcome)
        message = outcome.result.error[:2000]
        if outcome.items is None:  # a streamed batch: all its items at once, the skipped ones below
            ExportItem.objects.filter(delivery=outcome.delivery).update(status=status, message=message)
        else:
            by_status.setdefault((status, message), []).extend(
                item.pk for item in outcome.items if item.pk not in outcome.skipped
            )
        for pk, reason in outcome.skipped.items():
            by_status.setdefault((ExportStatus.SKIPPED, reason), []).append(pk)
    for (status, message), ids in by_status.items():
        for start in range(0, len(ids), attempts.STREAM_PAGE):
            chunk = ids[start : start + attempts.STREAM_PAGE]
            ExportItem.objects.filter(pk__in=chunk).update(status=status, message=message)


def _handed_back(outcome: DeliveryOutcome) -> timedelta | None:
    """The countdown of a delivery due again soon (a retry, the end of a pause), handed to Celery after commit;
    None for a later one or a finished one. The database holds the time: the countdown only saves waiting for the
    sweeper."""
    match outcome:
        case Failed(retry_in=retry_in) | Paused(retry_in=retry_in):
            return retry_in if retry_in.total_seconds() <= HAND_BACK_SECONDS else None
        case _:
            return None
