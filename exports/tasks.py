"""Celery tasks of the export pipeline: they take ids and call a service; safe to run twice.

The delivery tasks run under soft and hard time limits shorter than a delivery's lease (settings
EXPORT_TASK_SOFT_TIME_LIMIT, EXPORT_TASK_TIME_LIMIT, EXPORT_LEASE_SECONDS; checked when the settings load).
Time limits need the prefork pool (``runall`` and production); the solo pool ignores them. Their messages are
acknowledged at the end or at the start of the task (EXPORT_TASK_ACKS_LATE; see the settings for why it depends on
the broker): a delivery's state is in the database, so a killed worker's delivery is handed over by the sweeper.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from exports import retention, services

# A delivery task's limits: the soft one ends a send cleanly (recorded as a timeout), well before the hard one.
_DELIVERY_TASK = {
    "soft_time_limit": settings.EXPORT_TASK_SOFT_TIME_LIMIT,
    "time_limit": settings.EXPORT_TASK_TIME_LIMIT,
    "acks_late": settings.EXPORT_TASK_ACKS_LATE,
}


@shared_task(name=services.DELIVER_TASK, **_DELIVERY_TASK)
def deliver(queue_id: int, delivery_pks: list[int] | None = None) -> dict[int, str]:
    """One export queue's due real-time deliveries, ``delivery_pks`` first."""
    return services.deliver_queue(queue_id=queue_id, delivery_pks=delivery_pks or [])


@shared_task(name=services.DELIVER_CRON_TASK, **_DELIVERY_TASK)
def deliver_cron(queue_id: int, delivery_pks: list[int] | None = None) -> dict[int, str]:
    """The same work as ``deliver`` for one queue's cron windows: a task name of its own routes it to the cron
    queue."""
    return services.deliver_queue(queue_id=queue_id, delivery_pks=delivery_pks or [], cron=True)


# The beat's periodic jobs take no argument: each task is its service itself, under its task name.
sweep_exports = shared_task(name="exports.tasks.sweep_exports")(services.sweep)
run_cron_exports = shared_task(name="exports.tasks.run_cron_exports")(services.run_cron)
prune_export_logs = shared_task(name="exports.tasks.prune_export_logs")(retention.prune_export_logs)
