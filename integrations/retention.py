"""Retention of the runtime-integration call log and of remembered customer discounts.

A successful call goes after ``RETENTION_SUCCESS_DAYS`` (default 14), a failed one after
``RETENTION_FAILURE_DAYS`` (default 90): the same periods as the export log, whose outcomes they resemble. A
remembered answer of a customer's discounts goes once it is older than
``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS``: it is never used again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from accounts.retention import cutoff, delete_in_batches
from integrations.models import CustomerDiscountsAnswer, IntegrationCall


def prune_integration_calls(
    *,
    now: datetime | None = None,
    success_days: int | None = None,
    failure_days: int | None = None,
    batch: int | None = None,
) -> int:
    """Delete call log rows past their period, in batches; returns how many.

    Runs every day from beat (``integrations.tasks.prune_integration_calls``).
    """
    now = now or timezone.now()
    deleted = 0
    for ok, days in (
        (True, settings.RETENTION_SUCCESS_DAYS if success_days is None else success_days),
        (False, settings.RETENTION_FAILURE_DAYS if failure_days is None else failure_days),
    ):
        before = cutoff(days=days, now=now)
        if before is not None:
            calls = IntegrationCall.objects.filter(ok=ok, created_at__lt=before)
            deleted += delete_in_batches(calls, batch=batch)[IntegrationCall._meta.label]
    return deleted


def prune_customer_discounts_answers(*, now: datetime | None = None, batch: int | None = None) -> int:
    """Delete the remembered customer discounts past ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`` (all of them when
    it is 0), in batches; returns how many. Runs with the call log's retention."""
    before = (now or timezone.now()) - timedelta(seconds=max(settings.POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS, 0))
    answers = CustomerDiscountsAnswer.objects.filter(fetched_at__lt=before)
    return delete_in_batches(answers, batch=batch)[CustomerDiscountsAnswer._meta.label]
