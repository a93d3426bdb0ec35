"""Operational bookkeeping: the beat heartbeat (docs/operations.md, Observability)."""

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


class NotificationSent(models.Model):
    """One notice mailed to one member (``ops.notifications``): written once the relay took the mail, so a run
    that finds it sends nothing again, and a mail the relay refused is tried on the next run. ``subject_key``
    names what the notice is about (a queue's disable, a breaker's open period, a digest's day); with the
    membership and the kind it is unique: two runs at once send one of them at most once each."""

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="+")
    membership = models.ForeignKey("accounts.Membership", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    subject_key = models.CharField(max_length=400)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["membership", "kind", "subject_key"], name="notification_sent_once")
        ]
        indexes = [models.Index(fields=["account", "sent_at"], name="notification_sent_account")]

    def __str__(self) -> str:
        return f"{self.kind} {self.subject_key} to {self.membership_id}"
