"""Register periods and register close statements (spec: Register close statement)."""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.db.models import Max
from django.utils import timezone

from accounts.models import Account, Register
from ledger.models import RegisterPeriod


def open_period_for(*, account: Account, register: Register, at: datetime | None = None) -> RegisterPeriod:
    """The register's open period, opened now when there is none (a register whose first sale arrives
    after a close opens implicitly). Must run inside the caller's transaction; the register row is locked
    so that two concurrent first sales open one period, not two."""
    if not connection.in_atomic_block:
        raise RuntimeError("open_period_for must run inside the transaction that books into the period")
    Register.objects.select_for_update().filter(pk=register.pk, account=account).values_list("pk").get()
    period = RegisterPeriod.objects.filter(register=register, closed_at__isnull=True).first()
    if period is not None:
        return period
    last = RegisterPeriod.objects.filter(register=register).aggregate(n=Max("sequence_number"))["n"] or 0
    return RegisterPeriod.objects.create(
        account=account, register=register, sequence_number=last + 1, opened_at=at or timezone.now()
    )
