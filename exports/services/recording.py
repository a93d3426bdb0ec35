"""The outcomes of attempts written in one transaction: attempts, deliveries, items, the breaker's counts;
retries due soon handed back after commit."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from django.db import transaction
from django.utils import timezone

from exports import circuit
from exports.deliveries.base import short_answer, short_sent
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportStatus
from exports.services import attempts, enqueueing
from exports.services.outcomes import DeliveryOutcome


def record(outcomes: Sequence[DeliveryOutcome]) -> None:
    """Every outcome in one transaction: attempts, deliveries, items; retries handed back after commit."""
    now = timezone.now()
    with transaction.atomic():
        ExportAttempt.objects.bulk_create(
            [
                ExportAttempt(
                    account_id=o.delivery.account_id,
                    delivery=o.delivery,
                    number=o.delivery.attempts,
                    ok=o.result.ok,
                    status_code=o.result.status_code,
                    error=o.result.error[:2000],
                    duration_ms=o.duration_ms,
                    started_at=o.started,
                    sent=short_sent(o.result.sent),
                    answer=short_answer(o.result.answer),
                )
                for o in outcomes
                if not o.paused
            ]
        )
        for o in outcomes:
            d = o.delivery
            d.lease_owner = ""
            if o.paused:
                circuit.pause(d, o.result)
                continue
            d.paused_until, d.pause_reason = None, ""
            d.status, d.status_code, d.error, d.duration_ms = (
                o.status,
                o.result.status_code,
                o.result.error[:2000],
                o.duration_ms,
            )
            d.lease_until = None
            if o.retry_in is not None:
                d.next_attempt_at = now + o.retry_in
                if _handed_back(o):
                    d.handed_off_at = d.next_attempt_at  # its task runs then: the sweeper leaves it until
            else:
                d.finished_at = now
        ExportDelivery.objects.bulk_update(
            [o.delivery for o in outcomes],
            [
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
            ],
        )
        circuit.give_back_attempts(o.delivery.pk for o in outcomes if o.paused)
        by_status: dict[tuple[str, str], list[int]] = {}
        for o in outcomes:
            if o.status == ExportStatus.PENDING:
                continue  # a retry: its items stay pending
            item_status = ExportStatus.SUCCESS if o.status == ExportStatus.SKIPPED else o.status
            key = (item_status, o.result.error[:2000])
            if o.items is None:  # a streamed batch: all its items at once, the skipped ones below
                ExportItem.objects.filter(delivery=o.delivery).update(status=item_status, message=key[1])
            else:
                by_status.setdefault(key, []).extend(i.pk for i in o.items if i.pk not in o.skipped)
            for pk, reason in o.skipped.items():
                by_status.setdefault((ExportStatus.SKIPPED, reason), []).append(pk)
        for (status, message), ids in by_status.items():
            for start in range(0, len(ids), attempts.STREAM_PAGE):
                chunk = ids[start : start + attempts.STREAM_PAGE]
                ExportItem.objects.filter(pk__in=chunk).update(status=status, message=message)
        circuit.note_outcomes((o.delivery.queue, o.result) for o in outcomes if o.status != ExportStatus.SKIPPED)
        for o in outcomes:
            if _handed_back(o):
                assert o.retry_in is not None
                transaction.on_commit(
                    partial(
                        enqueueing.hand_off,
                        {o.delivery.queue_id: [o.delivery.pk]},
                        o.retry_in.total_seconds(),
                        cron=bool(o.delivery.window),
                    )
                )


def _handed_back(outcome: DeliveryOutcome) -> bool:
    """The database holds the retry time; a short countdown only saves waiting for the sweeper."""
    return outcome.retry_in is not None and outcome.retry_in.total_seconds() <= 60
