"""Writes of the ops app (spec issue 7, Observability: beat heartbeat)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ops.models import Heartbeat

BEAT = "beat"


def record_heartbeat(*, name: str = BEAT, at: datetime | None = None) -> datetime:
    """Stamp the heartbeat ``name`` with ``at`` (now by default); ``/health/ready`` checks its age.

    No account: the heartbeat is the platform's, not a tenant's.
    """
    beat_at = at or timezone.now()
    with transaction.atomic():
        Heartbeat.objects.update_or_create(name=name, defaults={"beat_at": beat_at})
    return beat_at
