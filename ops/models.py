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


class BeatLease(models.Model):
    """Which beat process sends the periodic tasks (``ops.beat.LeasedScheduler``): one row per ``name``
    (``"beat"``). A beat holds the lease while ``expires_at`` is ahead and renews it on every tick; any other beat
    stands by and takes the lease (a conditional UPDATE: one wins) once it has run out.

    ``contested_at`` is when the lease was last taken from a holder still proving it is alive (``core.liveness``):
    two beats believed they were active, and ``/health/ready`` says so for a while.
    """

    name = models.CharField(max_length=32, unique=True)
    holder = models.CharField(max_length=200, blank=True, default="")
    expires_at = models.DateTimeField()
    acquired_at = models.DateTimeField(null=True, blank=True)
    previous_holder = models.CharField(max_length=200, blank=True, default="")
    contested_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder or 'nobody'} until {self.expires_at.isoformat()}"
