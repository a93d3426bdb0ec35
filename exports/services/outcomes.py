"""What one attempt of a delivery gave, for ``recording.record``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from exports.deliveries.base import DeliveryResult
from exports.models import ExportDelivery, ExportItem


@dataclass
class DeliveryOutcome:
    delivery: ExportDelivery
    items: list[ExportItem] | None  # None: a streamed cron batch, whose items are updated by delivery
    result: DeliveryResult
    status: str
    skipped: dict[int, str]
    started: datetime
    duration_ms: int
    retry_in: timedelta | None = None
    paused: bool = False  # not sent: the destination's breaker is open (``exports.circuit``); not an attempt
    out_of_time: bool = False  # the task's soft time limit cut this send off: the task stops after recording it
