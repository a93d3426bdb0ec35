"""Writes of the account structure and of API keys."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Model, ProtectedError
from django.utils import timezone

from accounts import audit, keys
from accounts.models import (
    Account,
    ApiKey,
    Cashier,
    Identified,
    Integration,
    Market,
    Membership,
    NotificationKind,
    NotificationPreference,
    PersonPreference,
    Register,
    Role,
    Scope,
    StockLocation,
)
from accounts.selectors import notifications_chosen
from core.errors import Conflict, NotFound, ServiceError

# Writing last use on every request would turn every read into a write; a minute is precise enough.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def ensure_account_and_integration(
    *, account_identifier: str, integration_identifier: str
) -> tuple[Account, Integration]:
    """The account and its integration, created when missing."""
    with transaction.atomic():
        account, _ = Account.objects.get_or_create(identifier=account_identifier, defaults={"name": account_identifier})
        integration, _ = Integration.objects.get_or_create(
            account=account, identifier=integration_identifier, defaults={"name": integration_identifier}
        )
    return account, integration


def create_api_key(
    *, account: Account, integration: Integration | str, scopes: list[str], name: str = ""
) -> tuple[ApiKey, str]:
    """A new key for an integration of the account, given as the row or its identifier. Returns the row and the
    raw key, which is shown this once and stored only as a hash. Unknown or no scopes, or an integration the
    account does not have, are a ``ServiceError``."""
    if isinstance(integration, str):
        integration = _resolve(Integration, account=account, field="integration", identifier=integration)
    elif integration.account_id != account.pk:
        raise ServiceError(f"Unknown integration '{integration.identifier}'.", field="integration", code="unknown")
    unknown = set(scopes) - set(Scope.values)
    if unknown or not scopes:
        raise ServiceError(f"scopes must be a non-empty subset of {', '.join(Scope.values)}", field="scopes")
    raw_key, prefix, key_hash = keys.generate_key()
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            account=account,
            integration=integration,
            name=name,
            prefix=prefix,
            key_hash=key_hash,
            scopes=sorted(set(scopes)),
        )
        _record_api_key(account, api_key, "created", after=_api_key_fields(api_key))
    return api_key, raw_key


def _record_api_key(account: Account, api_key: ApiKey, action: str, **change: Any) -> None:
    """An audit entry of a key, named by its prefix and its integration."""
    audit.record(
        account=account,
        action=action,
        target_type="api_key",
        target_id=api_key.pk,
        target=f"{api_key.prefix}… ({api_key.integration.identifier})",
        **change,
    )


def _api_key_fields(api_key: ApiKey) -> dict[str, Any]:
    """What the audit trail shows of a key: never its hash."""
    return {
        "name": api_key.name,
        "prefix": api_key.prefix,
        "scopes": api_key.scopes,
        "integration": api_key.integration.identifier,
        "revoked_at": api_key.revoked_at.isoformat() if api_key.revoked_at else None,
    }


def revoke_api_key(*, account: Account, api_key: ApiKey) -> ApiKey:
    if api_key.account_id != account.pk:
        raise ValueError("the key belongs to another account")
    if api_key.revoked_at is None:
        with transaction.atomic():
            api_key.revoked_at = timezone.now()
            api_key.save(update_fields=["revoked_at"])
            _record_api_key(account, api_key, "revoked", changes={"revoked_at": [None, api_key.revoked_at.isoformat()]})
    return api_key


def record_api_key_use(*, api_key: ApiKey) -> None:
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


def ensure_demo_structure(*, account: Account) -> StockLocation:
    """The demo market ``dk`` (DKK, 25% VAT), shop ``shop-1`` and its register ``reg-1``, used by ``make run``
    and the README."""
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
    Register.objects.get_or_create(
        account=account, identifier="reg-1", defaults={"name": "Demo register", "stock_location": shop}
    )
    return shop


# --- Back-office REST API (/api/v1/): the shop structure as configuration -----------------------

_Owned = TypeVar("_Owned", bound=Identified)


def _save_owned(*, account: Account, instance: _Owned, data: Mapping[str, Any]) -> _Owned:
    """Apply validated fields, keep ``identifier`` unique in the account, ``full_clean()``, save."""
    if instance.pk is not None and instance.account_id != account.pk:
        raise ValueError("the object belongs to another account")
    creating = instance.pk is None
    before = None if creating else _audited_fields(instance, data)
    for name, value in data.items():
        setattr(instance, name, value)
    # (account, identifier) is the only unique constraint of these models.
    message = f"A {instance._meta.verbose_name} with the identifier '{instance.identifier}' already exists."
    with unique_in_account(account=account, instance=instance, field="identifier", message=message):
        instance.full_clean()
        with transaction.atomic():
            if creating:
                instance.save()
            else:
                instance.save(update_fields=list(data))
            audit.record(
                account=account,
                action="created" if creating else "changed",
                target_type=_audit_type(instance),
                target_id=instance.identifier,
                target=str(instance),
                before=before,
                after=_audited_fields(instance, data),
            )
    return instance


def _audit_type(instance: Model) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(instance).__name__).lower()


def _audited_fields(instance: Model, names: Iterable[str]) -> dict[str, Any]:
    """The fields as the audit trail shows them: a related row by its identifier (or primary key)."""
    shown: dict[str, Any] = {}
    for name in names:
        value = getattr(instance, name, None)
        if isinstance(value, Model):
            value = getattr(value, "identifier", value.pk)
        shown[name] = value
    return shown


@contextmanager
def unique_in_account(
    *, account: Account, instance: Model, field: str, message: str, error_field: str = ""
) -> Iterator[None]:
    """Around the save of ``instance``, whose ``field`` is unique in its account: when another row of the account
    has the value, a 400 ``duplicate`` with ``message``, naming ``error_field`` (the field as the client spells it;
    ``field`` by default). Checked before, not left to the constraint (or to full_clean()): the constraint spans
    (account, field), so its error would name no field. A concurrent insert that passes the check meets the
    constraint and gets the same error."""
    duplicate = ServiceError(message, field=error_field or field, code="duplicate")
    others = type(instance)._default_manager.filter(account=account, **{field: getattr(instance, field)})
    with transaction.atomic():
        if others.exclude(pk=instance.pk).exists():
            raise duplicate
        try:
            with transaction.atomic():
                yield
        except IntegrityError as exc:
            raise duplicate from exc


def _resolve(model: type[_Owned], *, account: Account, field: str, identifier: str) -> _Owned:
    """An object of the account by identifier; another account's object is as unknown as a missing one."""
    found = model._default_manager.filter(account=account, identifier=identifier).first()
    if found is None:
        raise ServiceError(f"Unknown {model._meta.verbose_name} '{identifier}'.", field=field, code="unknown")
    return found


def save_market(*, account: Account, market: Market | None = None, data: Mapping[str, Any]) -> Market:
    """Create (``market`` None) or update a market from validated API input."""
    return _save_owned(account=account, instance=market or Market(account=account), data=data)


def save_stock_location(
    *, account: Account, stock_location: StockLocation | None = None, data: Mapping[str, Any]
) -> StockLocation:
    """Create or update a stock location; ``data["market"]`` is a market identifier of the account."""
    data = dict(data)
    if "market" in data:
        data["market"] = _resolve(Market, account=account, field="market", identifier=data["market"])
    return _save_owned(account=account, instance=stock_location or StockLocation(account=account), data=data)


def save_register(*, account: Account, register: Register | None = None, data: Mapping[str, Any]) -> Register:
    """Create or update a register; ``data["stock_location"]`` is a stock location identifier."""
    data = dict(data)
    if "stock_location" in data:
        data["stock_location"] = _resolve(
            StockLocation, account=account, field="stock_location", identifier=data["stock_location"]
        )
    return _save_owned(account=account, instance=register or Register(account=account), data=data)


def save_cashier(*, account: Account, cashier: Cashier | None = None, data: Mapping[str, Any]) -> Cashier:
    """Create or update a cashier (spec: Cashier)."""
    return _save_owned(account=account, instance=cashier or Cashier(account=account), data=data)


def save_integration(
    *, account: Account, integration: Integration | None = None, data: Mapping[str, Any]
) -> Integration:
    """Create or update an integration (an import queue with its own keys and import log); an account has at most
    ``INTEGRATIONS_PER_ACCOUNT``."""
    if integration is not None:
        return _save_owned(account=account, instance=integration, data=data)
    limit: int = settings.INTEGRATIONS_PER_ACCOUNT
    with within_account_limit(account=account, model=Integration, limit=limit, field="identifier", what="integrations"):
        return _save_owned(account=account, instance=Integration(account=account), data=data)


@contextmanager
def within_account_limit(*, account: Account, model: type[Model], limit: int, field: str, what: str) -> Iterator[None]:
    """Around the creation of one more ``model`` row of ``account``: a 409 ``limit_reached`` naming ``field`` when
    the account has ``limit`` of them already (0: no limit). The account's row is locked from the count to the
    end of the insert's transaction (SELECT ... FOR UPDATE on PostgreSQL; SQLite writes one transaction at a
    time), so concurrent creations cannot pass the limit together."""
    with transaction.atomic():
        if limit > 0:
            list(Account.objects.select_for_update().filter(pk=account.pk).values_list("pk", flat=True))
            if model._default_manager.filter(account=account).count() >= limit:
                raise Conflict(
                    f"This account has {limit} {what}, the most it may have: delete one before adding another.",
                    field=field,
                    code="limit_reached",
                )
        yield


def delete_owned(*, account: Account, instance: Model, target_id: Any = None) -> None:
    """Delete a row of the account (what depends on it goes or stays as its foreign keys say). The audit trail
    names it by ``target_id``, by default its identifier (or primary key)."""
    if getattr(instance, "account_id", None) != account.pk:
        raise ValueError(f"the {instance._meta.verbose_name} belongs to another account")
    with transaction.atomic():
        identifier = target_id if target_id is not None else getattr(instance, "identifier", instance.pk)
        instance.delete()
        audit.record(
            account=account,
            action="deleted",
            target_type=_audit_type(instance),
            target_id=identifier,
            target=str(instance),
        )


def delete_account_object(*, account: Account, instance: Market | StockLocation | Register | Cashier) -> None:
    """Delete a market, stock location, register or cashier; refused (409) while still referenced."""
    try:
        delete_owned(account=account, instance=instance)
    except ProtectedError as exc:
        raise Conflict(_in_use_message(instance, exc.protected_objects), code="in_use") from exc


def delete_integration(*, account: Account, integration: Integration, acting_api_key: ApiKey) -> None:
    """Delete an integration with its keys and import log; never the one the caller is using."""
    if integration.account_id != account.pk:
        raise ValueError("the integration belongs to another account")
    if acting_api_key.integration_id == integration.pk:
        # Deleting it would delete the key of this very request: refuse rather than lock the caller out.
        raise Conflict(
            f"The integration '{integration.identifier}' is the one this request is authenticated with; "
            "delete it with a key of another integration.",
            code="in_use",
        )
    delete_owned(account=account, instance=integration)


def _in_use_message(instance: Model, protected: Iterable[Model]) -> str:
    by_kind: dict[str, list[str]] = {}
    for obj in protected:
        by_kind.setdefault(str(obj._meta.verbose_name), []).append(str(obj))
    users = "; ".join(
        f"{kind}: {', '.join(sorted(names)[:5])}{' ...' if len(names) > 5 else ''}" for kind, names in by_kind.items()
    )
    return f"The {instance._meta.verbose_name} '{instance}' is still used ({users}) and cannot be deleted."


# --- Members and roles ----------------------------------------------------------------------------------------


def add_member(*, account: Account, email: str, role: str, password: str | None = None) -> tuple[Membership, bool]:
    """Make the person with ``email`` a member of ``account`` with ``role`` (a Django user whose username is the
    e-mail address, lower-cased; created when missing). ``password`` sets theirs when given; a new person without
    one cannot sign in until they set it (password reset). Returns the membership and whether the person is new."""
    if role not in Role.values:
        raise ServiceError(f"unknown role '{role}'; use {', '.join(Role.values)}", field="role")
    address = email.strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        raise ServiceError(f"'{email}' is not an e-mail address", field="email") from None
    with transaction.atomic():
        user, created = get_user_model().objects.get_or_create(username=address, defaults={"email": address})
        if created and password is None:
            user.set_unusable_password()
        if password is not None:
            user.set_password(password)
        if created or password is not None:
            user.save()
        existing = Membership.objects.filter(account=account, user=user).first()
        membership, added = Membership.objects.update_or_create(account=account, user=user, defaults={"role": role})
        _record_member(
            account=account,
            address=address,
            action="created" if added else "changed",
            before=None if existing is None else {"role": existing.role},
            after={"role": role, **({"password": "set"} if password is not None else {})},
        )
    return membership, created


def _record_member(*, account: Account, address: str, action: str, **fields: Any) -> None:
    """An audit entry of a change of one of the account's members, named by their e-mail address."""
    audit.record(account=account, action=action, target_type="member", target_id=address, target=address, **fields)


def _locked_membership(*, account: Account, membership: Membership) -> Membership:
    """The membership as it is now, the account's row locked until the transaction ends (SELECT ... FOR UPDATE on
    PostgreSQL; SQLite writes one transaction at a time): two owners demoting each other at once cannot both pass
    the last-owner check."""
    if membership.account_id != account.pk:
        raise ValueError("the membership belongs to another account")
    list(Account.objects.select_for_update().filter(pk=account.pk).values_list("pk", flat=True))
    current = Membership.objects.select_related("user").filter(pk=membership.pk, account=account).first()
    if current is None:
        raise NotFound("This person is no longer a member of the account.", code="not_found")
    return current


def _keep_an_owner(*, account: Account, membership: Membership, role: str | None) -> None:
    """Refuse (409 ``last_owner``) a change that would leave the account without an owner: ``membership`` taking
    ``role`` (None: removed)."""
    if membership.role != Role.OWNER or role == Role.OWNER:
        return
    if not Membership.objects.filter(account=account, role=Role.OWNER).exclude(pk=membership.pk).exists():
        raise Conflict(
            f"{membership.user.get_username()} is the account's last owner: make another member an owner first.",
            field="role",
            code="last_owner",
        )


def change_member_role(*, account: Account, membership: Membership, role: str) -> Membership:
    """Give a member another role; the account's last owner keeps theirs."""
    if role not in Role.values:
        raise ServiceError(f"unknown role '{role}'; use {', '.join(Role.values)}", field="role")
    with transaction.atomic():
        current = _locked_membership(account=account, membership=membership)
        _keep_an_owner(account=account, membership=current, role=role)
        before = current.role
        if before != role:
            current.role = role
            current.save(update_fields=["role", "updated_at"])
            address = current.user.get_username()
            _record_member(
                account=account,
                address=address,
                action="changed",
                before={"role": before},
                after={"role": role},
            )
    return current


def remove_member(*, account: Account, membership: Membership) -> None:
    """End a person's membership of the account (the person stays, with their other accounts); never the
    account's last owner."""
    with transaction.atomic():
        current = _locked_membership(account=account, membership=membership)
        _keep_an_owner(account=account, membership=current, role=None)
        address = current.user.get_username()
        current.delete()
        _record_member(
            account=account,
            address=address,
            action="deleted",
            before={"role": current.role},
        )


def set_invited_password(*, account: Account, membership: Membership, password: str) -> None:
    """An invited member sets their password (the invitation names the account that invited them, where it is
    audited, as done by the person)."""
    if membership.account_id != account.pk:
        raise ValueError("the membership belongs to another account")
    user = membership.user
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        address = user.get_username()
        _record_member(
            account=account,
            address=address,
            action="changed",
            after={"password": "set"},
            actor=audit.Actor.person(user),
        )


def memberships_of(user: Any) -> list[Membership]:
    """The accounts a person may work in, with their role in each (the account switcher's list)."""
    return list(Membership.objects.filter(user=user).select_related("account").order_by("account__identifier"))


def record_new_password(*, user: Any) -> None:
    """Audit that a person set a new password (by the e-mail link) in each account they are a member of: the
    password as changed, never its value. In the caller's transaction, the one that saves the password."""
    _record_in_each_account(user, before=None, after={"password": "set"})


def _record_in_each_account(user: Any, **fields: Any) -> None:
    """An audit entry of a change of the person in each account they are a member of."""
    address = str(user.get_username())
    for membership in memberships_of(user):
        _record_member(account=membership.account, address=address, action="changed", **fields)


def language_of(*, user: Any) -> str:
    """The language the person chose for the back-office ("" when they chose none: their browser's)."""
    preference = PersonPreference.objects.filter(user=user).first()
    return preference.language if preference is not None else ""


def set_language(*, user: Any, language: str) -> str:
    """A person chooses the back-office's language (a code of ``LANGUAGES``; "" for their browser's). Kept for
    every account they work in; audited in each as a change of the member, by the person."""
    if language and language not in dict(settings.LANGUAGES):
        raise ServiceError(f"unknown language '{language}'", field="language", code="invalid_choice")
    with transaction.atomic():
        preference, _ = PersonPreference.objects.select_for_update().get_or_create(user=user)
        before = preference.language
        if before == language:
            return language
        preference.language = language
        preference.save(update_fields=["language", "updated_at"])
        _record_in_each_account(
            user, before={"language": before}, after={"language": language}, actor=audit.Actor.person(user)
        )
    return language


def set_notifications(*, account: Account, membership: Membership, chosen: Iterable[str]) -> frozenset[str]:
    """A member chooses what they are told by e-mail (``NotificationKind`` codes; the others are off). Audited
    as a change of the member (``notifications.<kind>``), by whoever is acting: the member themselves."""
    wanted = frozenset(chosen)
    unknown = wanted - set(NotificationKind.values)
    if unknown:
        raise ServiceError(f"unknown notification '{sorted(unknown)[0]}'", field="notifications")
    if membership.account_id != account.pk:
        raise NotFound("no such member", field="member")
    with transaction.atomic():
        before = notifications_chosen(account=account, membership=membership)
        NotificationPreference.objects.update_or_create(
            account=account,
            membership=membership,
            defaults={kind: kind in wanted for kind in NotificationKind.values},
        )
        address = membership.user.get_username()
        _record_member(
            account=account,
            address=address,
            action="changed",
            before={"notifications": {kind: kind in before for kind in NotificationKind.values}},
            after={"notifications": {kind: kind in wanted for kind in NotificationKind.values}},
        )
    return wanted
