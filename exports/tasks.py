"""Celery tasks of the export pipeline: they take ids and call a service; safe to run twice."""

from __future__ import annotations

from celery import shared_task

from exports import services


@shared_task(name="exports.tasks.deliver")
def deliver(delivery_pks: list[int]) -> dict[int, str]:
    return services.deliver_batch(delivery_pks=delivery_pks)


@shared_task(name="exports.tasks.sweep_exports")
def sweep_exports() -> int:
    return services.sweep()


@shared_task(name="exports.tasks.run_cron_exports")
def run_cron_exports() -> int:
    return services.run_cron()
