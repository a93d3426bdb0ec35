"""Celery tasks of the ops app: safe to run twice."""

from __future__ import annotations

from celery import shared_task

from ops import services


@shared_task(name="ops.tasks.beat_heartbeat")
def beat_heartbeat() -> str:
    """Run by beat every ``BEAT_HEARTBEAT_INTERVAL_SECONDS``: proves beat, the broker and a worker are alive."""
    return services.record_heartbeat().isoformat()


@shared_task(name="ops.tasks.prune_live_processes")
def prune_live_processes() -> int:
    """Run by beat hourly: the ``core.liveness`` rows of processes gone for over an hour are removed."""
    return services.prune_live_processes()
