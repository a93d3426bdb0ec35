"""Two-factor sign-in to the back-office: a person's authenticator app (a TOTP device of django-otp) and their
recovery codes (a static device: single-use codes), and an account's rule that every member must have them.

A person enrols once for all their accounts: the secret is made when the enrolment page is shown and kept in
their session until they confirm it with a first code; only then is a device stored (``enrol``), with
``RECOVERY_CODES`` recovery codes, which are shown once. A code is checked with ``check_code``: six digits are
the app's (each used once: django-otp keeps the last time step used), eight letters and digits a recovery code
(deleted when used). Each device slows guessing down itself (django-otp's throttling: after the n-th wrong code
in a row the next is refused for 2^(n-1) seconds, whatever the client, until a right one).

Every change is audited in each of the person's accounts (``target_type`` ``two_factor``, the e-mail address as
``target_id``); neither the secret nor a code is ever recorded. An owner's ``two_factor_required`` is audited as
a change of the account.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django_otp.models import Device
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp.util import random_hex

from accounts import audit
from accounts.models import Account
from accounts.services import memberships_of
from core.errors import ServiceError

__all__ = (
    "RECOVERY_CODES",
    "Status",
    "check_code",
    "enrol",
    "enrolment_device",
    "is_enrolled",
    "is_required",
    "new_secret",
    "renew_recovery_codes",
    "set_two_factor_required",
    "status",
    "turn_off",
    "wait_seconds",
)

RECOVERY_CODES = 10
# The devices' names (django-otp shows them in the admin).
APP_DEVICE = "authenticator app"
CODES_DEVICE = "recovery codes"
# A recovery code's length (django-otp's StaticToken.random_token: 5 random bytes in lower-case base32).
_RECOVERY_CODE_LENGTH = 8


class WrongCode(ServiceError):
    """The code typed is not the right one (or the device is slowing guesses down)."""

    status_code = 400


def new_secret() -> str:
    """A new TOTP secret (20 random bytes, in hex as django-otp stores it)."""
    return random_hex(20)


def enrolment_device(*, user: Any, secret: str) -> TOTPDevice:
    """The device ``secret`` becomes once confirmed, unsaved: its ``config_url`` is the otpauth:// URI."""
    return TOTPDevice(user=user, name=APP_DEVICE, key=secret, confirmed=False)


def _app(user: Any) -> TOTPDevice | None:
    found: TOTPDevice | None = TOTPDevice.objects.devices_for_user(user, confirmed=True).first()
    return found


def _codes(user: Any) -> StaticDevice | None:
    found: StaticDevice | None = StaticDevice.objects.devices_for_user(user, confirmed=True).first()
    return found


def is_enrolled(*, user: Any) -> bool:
    """Whether the person signs in with a second step (they have a confirmed authenticator app)."""
    return TOTPDevice.objects.devices_for_user(user, confirmed=True).exists()


def is_required(*, accounts: Iterable[Account]) -> bool:
    """Whether any of the person's accounts requires two-factor sign-in (one sign-in serves all of them)."""
    return any(account.two_factor_required for account in accounts)


@dataclass(frozen=True)
class Status:
    enrolled: bool
    since: datetime | None
    recovery_codes_left: int


def status(*, user: Any) -> Status:
    """The person's two-factor sign-in as their security page shows it."""
    app, codes = _app(user), _codes(user)
    return Status(
        enrolled=app is not None,
        since=getattr(app, "created_at", None),
        recovery_codes_left=codes.token_set.count() if codes is not None else 0,
    )


def _record(*, user: Any, action: str, changes: dict[str, list[Any]]) -> None:
    """Audit a change of the person's two-factor sign-in in each of their accounts, as done by them (at the code
    step of the sign-in they are not signed in yet)."""
    address = str(user.get_username())
    for membership in memberships_of(user):
        audit.record(
            actor=audit.Actor.person(user),
            account=membership.account,
            action=action,
            target_type="two_factor",
            target_id=address,
            target=address,
            changes=changes,
        )


def _new_codes(device: StaticDevice) -> list[str]:
    device.token_set.all().delete()
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def _first_code_matches(*, secret: str, code: str) -> tuple[int, int] | None:
    """The time step ``code`` belongs to for ``secret`` and the app's clock drift in steps (one step either side
    is accepted, as django-otp does at sign-in), else None."""
    code = normalised(code)
    if not code.isdigit() or len(code) > 10:
        return None
    device = enrolment_device(user=None, secret=secret)
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits)
    if not totp.verify(int(code), tolerance=device.tolerance):
        return None
    return int(totp.t()), int(totp.drift)


def enrol(*, user: Any, secret: str, code: str) -> tuple[TOTPDevice, list[str]]:
    """Backoffice "Two-factor sign-in": store the person's authenticator app once ``code`` proves they hold
    ``secret``, with new recovery codes (returned: shown once, never again). Replaces any device they had.
    Raises ``WrongCode``."""
    found = _first_code_matches(secret=secret, code=code)
    if found is None:
        raise WrongCode("That code is not the one the app shows.", field="code", code="wrong_code")
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        app = enrolment_device(user=user, secret=secret)
        app.confirmed = True
        app.last_t, app.drift = found  # the confirming code is used up
        app.save()
        codes_device = StaticDevice.objects.create(user=user, name=CODES_DEVICE, confirmed=True)
        codes = _new_codes(codes_device)
        changes: dict[str, list[Any]] = {"two_factor": [False, True], "recovery_codes": [None, len(codes)]}
        _record(user=user, action="enabled", changes=changes)
    return app, codes


def renew_recovery_codes(*, user: Any) -> list[str]:
    """New recovery codes in place of the person's old ones (returned: shown once). Only while enrolled."""
    with transaction.atomic():
        device = _codes(user)
        if _app(user) is None:
            raise ServiceError("Two-factor sign-in is off.", field="code", code="not_enrolled")
        if device is None:
            device = StaticDevice.objects.create(user=user, name=CODES_DEVICE, confirmed=True)
        left = device.token_set.count()
        codes = _new_codes(device)
        _record(user=user, action="codes_renewed", changes={"recovery_codes": [left, len(codes)]})
    return codes


def normalised(code: str) -> str:
    """A code as typed, without spaces and dashes, in lower case (recovery codes are lower-case base32)."""
    return "".join(code.split()).replace("-", "").lower()


def _device_for(user: Any, code: str) -> Device | None:
    return _codes(user) if len(code) == _RECOVERY_CODE_LENGTH else _app(user)


def wait_seconds(*, user: Any, code: str) -> int:
    """How long the device ``code`` is for refuses every code, after wrong ones (0: it takes one now)."""
    device = _device_for(user, normalised(code))
    if device is None:
        return 0
    allowed, data = device.verify_is_allowed()
    if allowed or not data or "locked_until" not in data:
        return 0
    return max(1, int((data["locked_until"] - timezone.now()).total_seconds() + 0.999))


def check_code(*, user: Any, code: str) -> Device | None:
    """The person's device that ``code`` is right for (an app's code, or a recovery code, which is then used up
    and audited), else None. A wrong code counts towards its device's throttling."""
    code = normalised(code)
    device = _device_for(user, code)
    if device is None:
        return None
    with transaction.atomic():
        if not device.verify_token(code):
            return None
        if isinstance(device, StaticDevice):
            left = device.token_set.count()
            _record(user=user, action="recovery_code_used", changes={"recovery_codes": [left + 1, left]})
    return device


def turn_off(*, user: Any, code: str) -> None:
    """Turn the person's two-factor sign-in off, once ``code`` (the app's or a recovery code) is right: the app
    and the recovery codes are deleted. Raises ``WrongCode``."""
    if check_code(user=user, code=code) is None:
        raise WrongCode("That code is not right.", field="code", code="wrong_code")
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        _record(user=user, action="disabled", changes={"two_factor": [True, False]})


def set_two_factor_required(*, account: Account, required: bool) -> Account:
    """The account's settings: whether every member must sign in with two factors. Audited as a change of the
    account (nothing when it is unchanged)."""
    with transaction.atomic():
        locked = Account.objects.select_for_update().get(pk=account.pk)
        before = locked.two_factor_required
        if before != required:
            locked.two_factor_required = required
            locked.save(update_fields=["two_factor_required"])
            audit.record(
                account=locked,
                action="changed",
                target_type="account",
                target_id=locked.identifier,
                target=locked.name or locked.identifier,
                changes={"two_factor_required": [before, required]},
            )
    account.two_factor_required = required
    return account
