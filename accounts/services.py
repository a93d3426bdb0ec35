"""Writes of the account structure and of API keys."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts import keys
from accounts.models import Account, ApiKey, Integration, Market, Scope, StockLocation

# Writing last use on every request would turn every read into a write; a minute is precise enough.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def ensure_account_and_integration(
    *, account_identifier: str, integration_identifier: str
) -> tuple[Account, Integration]:
    """The account and its integration, created when missing."""
    with transaction.atomic():
        account, _ = Account.objects.get_or_create(
            identifier=account_identifier, defaults={"name": account_identifier}
        )
        integration, _ = Integration.objects.get_or_create(
            account=account, identifier=integration_identifier, defaults={"name": integration_identifier}
        )
    return account, integration


def create_api_key(
    *, account: Account, integration: Integration, scopes: list[str], name: str = ""
) -> tuple[ApiKey, str]:
    """A new key for the integration. Returns the row and the raw key, which is not stored anywhere."""
    unknown = set(scopes) - set(Scope.values)
    if unknown or not scopes:
        raise ValueError(f"scopes must be a non-empty subset of {', '.join(Scope.values)}")
    if integration.account_id != account.pk:
        raise ValueError("the integration belongs to another account")
    raw_key, prefix, key_hash = keys.generate_key()
    api_key = ApiKey.objects.create(
        account=account,
        integration=integration,
        name=name,
        prefix=prefix,
        key_hash=key_hash,
        scopes=sorted(set(scopes)),
    )
    return api_key, raw_key


def revoke_api_key(*, account: Account, api_key: ApiKey) -> ApiKey:
    if api_key.account_id != account.pk:
        raise ValueError("the key belongs to another account")
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def record_api_key_use(*, api_key: ApiKey) -> None:
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


def ensure_demo_structure(*, account: Account) -> StockLocation:
    """The demo market ``dk`` (DKK, 25% VAT) and shop ``shop-1`` used by ``make run`` and the README."""
    market, _ = Market.objects.get_or_create(
        account=account,
        identifier="dk",
        defaults={
            "name": "Denmark",
            "currency": "DKK",
            "default_taxes": [{"name": "VAT", "rate": 0.25, "type": "vat"}],
        },
    )
    shop, _ = StockLocation.objects.get_or_create(
        account=account, identifier="shop-1", defaults={"name": "Demo shop", "market": market}
    )
    return shop
