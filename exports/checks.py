"""Deployment checks of the export pipeline (``manage.py check``; the settings also refuse to load without them)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register

from exports.deliveries import REGISTRY
from exports.services import RECORD_MARGIN_SECONDS


@register()
def delivery_time_limits(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A delivery's lease must outlive the task that holds it: 0 < soft time limit < hard time limit < lease.
    Otherwise the sweeper hands a delivery to a second worker while the first is still sending it."""
    soft = settings.EXPORT_TASK_SOFT_TIME_LIMIT
    hard = settings.EXPORT_TASK_TIME_LIMIT
    lease = settings.EXPORT_LEASE_SECONDS
    if 0 < soft < hard < lease:
        return []
    return [
        Error(
            f"EXPORT_TASK_SOFT_TIME_LIMIT ({soft:g}) < EXPORT_TASK_TIME_LIMIT ({hard:g}) < EXPORT_LEASE_SECONDS "
            f"({lease:g}) does not hold",
            hint="A lease must outlive the delivery task that holds it, or deliveries are sent twice.",
            id="exports.E001",
        )
    ]


@register()
def sends_per_task(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A delivery task starts a send only while what is left of its time covers the send's configured timeouts
    (less the margin kept to record outcomes). A soft time limit shorter than a kind's default timeouts leaves
    each task one send: it sends, hands the rest to a new task, and the queue's sends go one at a time."""
    soft = settings.EXPORT_TASK_SOFT_TIME_LIMIT
    left = soft - min(RECORD_MARGIN_SECONDS, soft * 0.2)
    short = sorted(code for code, kind in REGISTRY.items() if left < kind.time_budget({}))
    if not short:
        return []
    return [
        Warning(
            f"EXPORT_TASK_SOFT_TIME_LIMIT ({soft:g} s) leaves {left:g} s a task for sends, less than the default "
            f"timeouts of {', '.join(short)} deliveries: each task sends one of them and hands the rest over",
            hint="Raise EXPORT_LEASE_SECONDS (the soft limit is half of it by default) or EXPORT_TASK_SOFT_TIME_LIMIT.",
            id="exports.W002",
        )
    ]
