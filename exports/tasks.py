"""Celery tasks of the export pipeline: they take ids and call a service; safe to run twice."""

from __future__ import annotations

from celery import shared_task

from exports import retention, services


@shared_task(name="exports.tasks.deliver")
def deliver(delivery_pks: list[int]) -> dict[int, str]:
    return services.deliver_batch(delivery_pks=delivery_pks)


@shared_task(name="exports.tasks.sweep_exports")
def sweep_exports() -> int:
    return services.sweep()


@shared_task(name="exports.tasks.run_cron_exports")
def run_cron_exports() -> int:
    return services.run_cron()


@shared_task(name="exports.tasks.deliver_cron")
def deliver_cron(delivery_pks: list[int]) -> dict[int, str]:
    """The same work as ``deliver`` for cron windows: a task name of its own routes it to the cron queue."""
    return services.deliver_batch(delivery_pks=delivery_pks)


@shared_task(name="exports.tasks.prune_export_logs")
def prune_export_logs() -> dict[str, int]:
    return retention.prune_export_logs()
