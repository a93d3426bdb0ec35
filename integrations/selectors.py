"""Reads of runtime integrations and their call log; every function takes the account first."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import Account
from integrations.models import IntegrationCall, RuntimeIntegration


def runtime_integrations(*, account: Account) -> QuerySet[RuntimeIntegration]:
    return RuntimeIntegration.objects.filter(account=account).order_by("kind")


def enabled_integration(*, account: Account, kind: str) -> RuntimeIntegration | None:
    return RuntimeIntegration.objects.filter(account=account, kind=kind, enabled=True).first()


def integration_calls(
    *, account: Account, kind: str | None = None, ok: bool | None = None
) -> QuerySet[IntegrationCall]:
    calls = IntegrationCall.objects.filter(account=account)
    if kind:
        calls = calls.filter(kind=kind)
    if ok is not None:
        calls = calls.filter(ok=ok)
    return calls.order_by("-created_at", "-id")
