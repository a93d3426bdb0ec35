"""Request rates per subject in fixed windows, shared by every process through the database.

A caller names the subjects a request counts against with the limit of each (an account's and a key's, say):
``take`` counts the request against every one of them and returns 0, or counts nothing and returns the seconds
until the window of a subject at its limit ends (the caller answers 429 with that ``Retry-After``). A window
starts at a subject's first request and lasts ``window_seconds``; its count goes up by a single UPDATE that
also checks the limit, so concurrent requests of several processes never pass it together (on the embedded
default, SQLite, and on PostgreSQL alike). Only the subjects that made a request in the last window have a row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from core.errors import ServiceError
from core.models import RateWindow

__all__ = ["RateLimited", "take"]


class RateLimited(ServiceError):
    """429: too many requests of a kind; ``wait`` is the ``Retry-After`` in seconds."""

    status_code, code = 429, "rate_limited"

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(1, math.ceil((moment - now).total_seconds()))


def take(limits: Sequence[tuple[str, int]], *, window_seconds: float) -> int:
    """Count one request against each ``(subject, limit)`` (a limit of 0 or less: none) and return 0; or, when a
    subject is at its limit, count nothing more and return the seconds until its window ends."""
    active = [(subject, limit) for subject, limit in limits if limit > 0]
    if not active:
        return 0
    now = timezone.now()
    full = RateWindow.objects.filter(
        subject__in=[subject for subject, _ in active], window_ends_at__gt=now
    ).values_list("subject", "count", "window_ends_at")
    limit_of = dict(active)
    waits = [_seconds_until(ends, now) for subject, count, ends in full if count >= limit_of[subject]]
    if waits:
        return max(waits)
    for subject, limit in active:
        wait = _count(subject, limit=limit, now=now, window=timedelta(seconds=window_seconds))
        if wait:
            return wait  # another process filled it since the look above
    return 0


def _count(subject: str, *, limit: int, now: datetime, window: timedelta) -> int:
    """One more request in the subject's open window while it is under ``limit`` (0), the seconds until a full
    window ends, or a new window with one request (0)."""
    for _ in range(3):
        if RateWindow.objects.filter(subject=subject, window_ends_at__gt=now, count__lt=limit).update(
            count=F("count") + 1
        ):
            return 0
        ends = (
            RateWindow.objects.filter(subject=subject, window_ends_at__gt=now)
            .values_list("window_ends_at", flat=True)
            .first()
        )
        if ends is not None:
            return _seconds_until(ends, now)
        # No open window: start one, dropping every window that is over (this subject's too).
        RateWindow.objects.filter(window_ends_at__lte=now).delete()
        try:
            with transaction.atomic():
                RateWindow.objects.create(subject=subject, count=1, window_ends_at=now + window)
            return 0
        except IntegrityError:
            continue
    return 1
