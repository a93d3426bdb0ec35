"""Celery tasks of the ops app: safe to run twice."""

from __future__ import annotations

from celery import shared_task

from ops import notifications, services


@shared_task(name="ops.tasks.beat_heartbeat")
def beat_heartbeat() -> str:
    """Run by beat every ``BEAT_HEARTBEAT_INTERVAL_SECONDS``: proves beat, the broker and a worker are alive."""
    return services.record_heartbeat().isoformat()


@shared_task(name="ops.tasks.prune_live_processes")
def prune_live_processes() -> int:
    """Run by beat hourly: the ``core.liveness`` rows of processes gone for over an hour are removed."""
    return services.prune_live_processes()


@shared_task(name="ops.tasks.notify_problems")
def notify_problems() -> int:
    """Run by beat every minute: members told of export queues disabled and of breakers open too long."""
    return notifications.notify_problems().sent


@shared_task(name="ops.tasks.notify_digests")
def notify_digests() -> int:
    """Run by beat every 15 minutes: yesterday's digest, once a day per member who asked, from NOTIFY_DIGEST_HOUR."""
    return notifications.notify_digests().sent
