"""Celery tasks of runtime integrations: housekeeping only (the calls themselves run in the request)."""

from __future__ import annotations

from celery import shared_task

from integrations import retention


@shared_task(name="integrations.tasks.prune_integration_calls")
def prune_integration_calls() -> int:
    return retention.prune_integration_calls() + retention.prune_customer_discounts_answers()
