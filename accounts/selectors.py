"""Reads of the account structure. Every function takes the account first (or finds it by key)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from accounts import auth_failures, keys
from accounts.models import (
    NOTIFICATION_DEFAULTS,
    Account,
    ApiKey,
    AuditEntry,
    Cashier,
    Integration,
    Market,
    Membership,
    NotificationPreference,
    Register,
    StockLocation,
)


def api_key_for_credentials(
    *, account_identifier: str, integration_identifier: str, raw_key: str, unless_locked: Sequence[str] = ()
) -> ApiKey | None:
    """The active key matching all three credentials, or None. One query, constant-time compare.

    ``unless_locked``: subjects of ``accounts.auth_failures`` whose lock refuses the right key too (the client's
    address); while one of them is locked out the answer is None whatever the key. A clause of the same query
    decides it, so a successful authentication costs no query more than without the limit.
    """
    prefix = keys.prefix_of(raw_key)
    candidate = None
    if prefix is not None and account_identifier and integration_identifier:
        unlocked = [auth_failures.unlocked(unless_locked)] if unless_locked else []
        candidate = (
            ApiKey.objects.select_related("account", "integration")
            .filter(
                *unlocked,
                prefix=prefix,
                revoked_at__isnull=True,
                account__identifier=account_identifier,
                integration__identifier=integration_identifier,
            )
            .first()
        )
    ok = keys.matches(raw_key, candidate.key_hash if candidate else None)
    return candidate if ok else None


def stock_location_by_identifier(*, account: Account, identifier: str) -> StockLocation | None:
    return StockLocation.objects.select_related("market").filter(account=account, identifier=identifier).first()


def stock_locations_by_identifier(*, account: Account, identifiers: set[str]) -> dict[str, StockLocation]:
    rows = StockLocation.objects.filter(account=account, identifier__in=identifiers)
    return {s.identifier: s for s in rows}


def markets_by_identifier(*, account: Account, identifiers: list[str]) -> dict[str, Market]:
    return {m.identifier: m for m in Market.objects.filter(account=account, identifier__in=identifiers)}


# --- Back-office REST API (/api/v1/) ------------------------------------------------------------


def markets(*, account: Account) -> QuerySet[Market]:
    return Market.objects.filter(account=account).order_by("identifier")


def market_by_identifier(*, account: Account, identifier: str) -> Market | None:
    return Market.objects.filter(account=account, identifier=identifier).first()


def stock_locations(*, account: Account) -> QuerySet[StockLocation]:
    return StockLocation.objects.filter(account=account).select_related("market").order_by("identifier")


def registers(*, account: Account) -> QuerySet[Register]:
    return Register.objects.filter(account=account).select_related("stock_location").order_by("identifier")


def cashiers(*, account: Account) -> QuerySet[Cashier]:
    return Cashier.objects.filter(account=account).order_by("identifier")


def integrations(*, account: Account) -> QuerySet[Integration]:
    return Integration.objects.filter(account=account).order_by("identifier")


def integration_by_identifier(*, account: Account, identifier: str) -> Integration | None:
    return Integration.objects.filter(account=account, identifier=identifier).first()


def api_keys(*, account: Account) -> QuerySet[ApiKey]:
    """Every key of the account, revoked ones included (they stay listed for the audit trail)."""
    return ApiKey.objects.filter(account=account).select_related("integration").order_by("-created_at", "-id")


def audit_entries(
    *,
    account: Account,
    target_type: str = "",
    target_id: str = "",
    actor: str = "",
    actor_kind: str = "",
) -> QuerySet[AuditEntry]:
    """The account's audit trail, newest first, filtered by object and actor (each filter on an index that leads
    with the account)."""
    entries = AuditEntry.objects.filter(account=account)
    if target_type:
        entries = entries.filter(target_type=target_type)
    if target_id:
        entries = entries.filter(target_id=target_id)
    if actor:
        entries = entries.filter(actor=actor)
    if actor_kind:
        entries = entries.filter(actor_kind=actor_kind)
    return entries.order_by("-at", "-id")


def members(*, account: Account) -> QuerySet[Membership]:
    """The account's members with their person, by e-mail address."""
    return Membership.objects.filter(account=account).select_related("user").order_by("user__username")


def membership(*, account_id: int, user_id: int) -> Membership | None:
    """One person's membership of one account (both by id, as a signed invitation names them), or None."""
    return Membership.objects.select_related("account", "user").filter(account_id=account_id, user_id=user_id).first()


def notifications_chosen(*, account: Account, membership: Membership) -> frozenset[str]:
    """The ``NotificationKind`` codes the member wants: their own choice, else their role's defaults."""
    if membership.account_id != account.pk:
        return frozenset()
    preference = NotificationPreference.objects.filter(account=account, membership=membership).first()
    return preference.chosen() if preference is not None else NOTIFICATION_DEFAULTS.get(membership.role, frozenset())


def members_notified(*, account: Account, kind: str) -> list[Membership]:
    """The account's active members who want ``kind``, with their person loaded (two queries)."""
    chosen = {
        membership_id: preference
        for membership_id, preference in NotificationPreference.objects.filter(account=account).values_list(
            "membership_id", kind
        )
    }
    found = Membership.objects.filter(account=account, user__is_active=True).select_related("user").order_by("pk")
    return [
        membership
        for membership in found
        if chosen.get(membership.pk, kind in NOTIFICATION_DEFAULTS.get(membership.role, frozenset()))
    ]
