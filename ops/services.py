"""Writes of the ops app (docs/operations.md, Observability): the beat heartbeat, the beat lease, housekeeping."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from core import liveness
from ops.models import BeatLease, Heartbeat

BEAT = "beat"
# Before any beat ever held the lease: long run out.
_NEVER = datetime(2000, 1, 1, tzinfo=UTC)


def record_heartbeat(*, name: str = BEAT, at: datetime | None = None) -> datetime:
    """Stamp the heartbeat ``name`` with ``at`` (now by default); ``/health/ready`` checks its age.

    No account: the heartbeat is the platform's, not a tenant's.
    """
    beat_at = at or timezone.now()
    with transaction.atomic():
        Heartbeat.objects.update_or_create(name=name, defaults={"beat_at": beat_at})
    return beat_at


@dataclass(frozen=True)
class LeaseState:
    """What one attempt to hold the beat lease found: whether ``holder`` holds it now, who did before (when it
    changed hands) and who holds it otherwise."""

    held: bool
    holder: str
    took_over_from: str | None = None
    contested: bool = False


def hold_beat_lease(*, holder: str, seconds: float, name: str = BEAT) -> LeaseState:
    """Renew ``holder``'s lease on the periodic tasks for ``seconds``, or take it when it has run out.

    Conditional UPDATEs, so that of two beats trying at once exactly one wins; the database's clock, not the
    machines', decides whether a lease has run out. A lease taken from a holder still proving it is alive
    (``core.liveness``) is marked contested: that holder stalled longer than the lease and may still send.
    """
    BeatLease.objects.bulk_create([BeatLease(name=name, expires_at=_NEVER)], ignore_conflicts=True)
    until = Now() + timedelta(seconds=seconds)
    lease = BeatLease.objects.filter(name=name)
    if lease.filter(holder=holder).update(expires_at=until):
        return LeaseState(held=True, holder=holder)
    current = lease.values_list("holder", flat=True).first() or ""
    taken = lease.filter(holder=current, expires_at__lt=Now()).update(
        holder=holder, expires_at=until, acquired_at=Now(), previous_holder=current
    )
    if not taken:
        return LeaseState(held=False, holder=current)
    contested = bool(current) and not liveness.dead([current])
    if contested:
        lease.filter(holder=holder).update(contested_at=Now())
    return LeaseState(held=True, holder=holder, took_over_from=current, contested=contested)


def release_beat_lease(*, holder: str, name: str = BEAT) -> bool:
    """A clean shutdown: give the lease up at once, so that a standby takes over on its next tick."""
    return bool(BeatLease.objects.filter(name=name, holder=holder).update(expires_at=_NEVER))


def prune_live_processes(*, older_than: timedelta = timedelta(hours=1)) -> int:
    """Remove the ``core.liveness`` rows of processes gone for longer than ``older_than`` (each restart of a
    worker or beat process leaves one)."""
    return liveness.prune(older_than=older_than)
