"""Reads of runtime integrations and their call log; every function takes the account first."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from accounts.models import Account
from integrations.models import CustomerDiscountsAnswer, IntegrationCall, RuntimeIntegration


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


def fresh_customer_discounts(
    *, account: Account, customer_id: str, market: str, currency_code: str, max_age_seconds: int
) -> list[Any]:
    """``[answer]``: the remembered answer of the account's enabled ``customer_discounts`` integration for this
    customer, market and currency, when it is younger than ``max_age_seconds`` and came from the configuration
    as it is now; ``[]`` otherwise (an answer may itself be null). One query, the answer's JSON only."""
    return list(
        CustomerDiscountsAnswer.objects.filter(
            account=account,
            customer_id=customer_id,
            market=market,
            currency_code=currency_code,
            fetched_at__gt=timezone.now() - timedelta(seconds=max_age_seconds),
            integration__enabled=True,
            integration_updated_at=F("integration__updated_at"),
        ).values_list("data", flat=True)[:1]
    )
