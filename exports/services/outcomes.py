"""What one attempt of a delivery gave, as typed states (as Svix's dispatch states are): delivered, skipped
(nothing to send), failed with a retry due, given up, or paused by the destination's breaker. ``recording.record``
writes each by its kind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar, TypeAlias

from exports.deliveries.base import DeliveryResult
from exports.models import ExportDelivery, ExportItem, ExportStatus


@dataclass(frozen=True)
class Attempted:
    """An attempt that counts (every outcome but a pause): the leased delivery, its items (None: a streamed cron
    window, whose items are updated by delivery), what the destination answered, the items the transform skipped
    with their reasons, when the attempt started and how long it took."""

    delivery: ExportDelivery
    items: list[ExportItem] | None
    result: DeliveryResult
    skipped: dict[int, str]
    started: datetime
    duration_ms: int

    status: ClassVar[str]  # the delivery's status after it, each kind's own


@dataclass(frozen=True)
class Delivered(Attempted):
    """The destination took it."""

    status: ClassVar[str] = ExportStatus.SUCCESS


@dataclass(frozen=True)
class Skipped(Attempted):
    """Nothing to send: the transform skipped every element (or their entities no longer exist)."""

    status: ClassVar[str] = ExportStatus.SKIPPED


@dataclass(frozen=True)
class Failed(Attempted):
    """Not delivered, to be tried again in ``retry_in`` (the spec's retry rule). ``cut_off``: the task's soft time
    limit ended this send; the task stops once it is recorded."""

    retry_in: timedelta
    cut_off: bool = False

    status: ClassVar[str] = ExportStatus.PENDING


@dataclass(frozen=True)
class GaveUp(Attempted):
    """Not delivered, and no attempt is left under the retry rule (or the failure is permanent). ``cut_off`` as
    for ``Failed``."""

    cut_off: bool = False

    status: ClassVar[str] = ExportStatus.FAILURE


@dataclass(frozen=True)
class Paused:
    """Not sent: the destination's breaker is open (``exports.circuit``; ``result.paused_until`` says until when).
    Not an attempt: the lease's count is given back, and the delivery is due again in ``retry_in``."""

    delivery: ExportDelivery
    result: DeliveryResult
    retry_in: timedelta

    status: ClassVar[str] = ExportStatus.PENDING


DeliveryOutcome: TypeAlias = Delivered | Skipped | Failed | GaveUp | Paused


def cut_off(outcome: DeliveryOutcome) -> bool:
    """Whether the task's soft time limit ended this send (the task then stops after recording it)."""
    return isinstance(outcome, Failed | GaveUp) and outcome.cut_off
