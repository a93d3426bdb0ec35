"""Deployment checks of the export pipeline (``manage.py check``; the settings also refuse to load without them)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register


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
