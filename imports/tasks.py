"""Celery tasks of the import pipeline: they take ids and call a service; safe to run twice."""

from __future__ import annotations

from celery import shared_task

from imports import retention, services


@shared_task(name=services.MATERIALISE_TASK)
def materialise_import_items(account_id: int, item_ids: list[int]) -> int:
    return services.materialise_items(account_id=account_id, item_ids=item_ids)


# The beat's periodic jobs take no argument: each task is its service itself, under its task name.
sweep_pending_imports = shared_task(name="imports.tasks.sweep_pending_imports")(services.sweep_pending)
prune_import_logs = shared_task(name="imports.tasks.prune_import_logs")(retention.prune_import_logs)
