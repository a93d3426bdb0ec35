"""Operational bookkeeping: the beat heartbeat (spec issue 7, Observability)."""

from __future__ import annotations

from django.db import models


class Heartbeat(models.Model):
    """The last time a periodic process proved it is alive. One row per ``name`` (``"beat"``).

    In the database, not the cache: the web processes that answer ``/health/ready`` and the worker that runs
    the beat's heartbeat task are different processes, possibly on different machines.
    """

    name = models.CharField(max_length=32, unique=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at.isoformat()}"
