"""Tables of ``core``: state every process shares, for every app."""

from __future__ import annotations

from django.db import models


class BreakerState(models.TextChoices):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker(models.Model):
    """One destination's circuit breaker (``core.breaker``): a row shared by every web and worker process.

    ``failures`` counts consecutive failures; ``open_until`` ends an open breaker's cool-down; ``trial_until``
    is the lease of the one trial call of a half-open breaker (another may be claimed once it has run out: the
    process making it died). ``trips`` counts the openings since the last success (the cool-down grows with it);
    ``failing_since`` is the first failure since the last success.
    """

    key = models.CharField(max_length=300, unique=True)
    state = models.CharField(max_length=16, choices=BreakerState.choices, default=BreakerState.CLOSED)
    failures = models.PositiveIntegerField(default=0)
    trips = models.PositiveIntegerField(default=0)
    open_until = models.DateTimeField(null=True, blank=True)
    trial_until = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.key}: {self.state}"


class ProcessKind(models.TextChoices):
    WORKER = "worker"
    BEAT = "beat"


class LiveProcess(models.Model):
    """A worker or beat process proving it is alive (``core.liveness``): one row per process, ``seen_at`` renewed
    every ``LIVENESS_INTERVAL_SECONDS`` by a thread of its own, so a process busy in a long send still proves it.

    ``name`` is ``hostname:pid``, the owner written on what the process leases (an export delivery's
    ``lease_owner``): a lease whose owner has not been seen for ``LIVENESS_TIMEOUT_SECONDS`` is taken over without
    waiting for its end. In the database, not the broker: the leases it vouches for are there, and every machine
    sees it.
    """

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=16, choices=ProcessKind.choices)
    hostname = models.CharField(max_length=190)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField()

    class Meta:
        ordering = ["hostname", "pid"]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class RateWindow(models.Model):
    """The requests of one subject (``core.ratelimit``: an account's or a key's previews, say) counted in its
    current window; shared by every process. One row per subject, counted up atomically, pruned once over."""

    subject = models.CharField(max_length=120, unique=True)
    count = models.PositiveIntegerField()
    window_ends_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(count__gte=1), name="rate_window_count_at_least_one")]

    def __str__(self) -> str:
        return f"{self.subject}: {self.count} until {self.window_ends_at:%Y-%m-%d %H:%M:%S}"
