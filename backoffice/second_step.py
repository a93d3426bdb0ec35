"""The second step of the back-office's sign-in, for a person with two-factor sign-in on.

The right password alone does not sign such a person in: the sign-in page keeps them in the session as pending
(``begin``: who, through which backend, a fingerprint of their password, since when) and sends them to
``/backoffice/login/verify/``; a right code there signs them in with Django's ``login`` and marks the session
verified with django-otp's (``finish``). A pending sign-in lasts ``PENDING_MAX_AGE`` seconds and ends when the
password changes. A person already signed in whose session is not verified (they enrolled in another session)
is sent to the same page by ``member_view``. What a signed-in person must still do is ``step``: nothing, type a
code (``VERIFY``), or enrol because one of their accounts requires it (``ENROL``).
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model, login
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django_otp import login as otp_login
from django_otp.models import Device

from accounts import two_factor
from accounts.models import Account

__all__ = (
    "ENROL",
    "PENDING_KEY",
    "PENDING_MAX_AGE",
    "VERIFY",
    "begin",
    "finish",
    "is_verified",
    "pending_user",
    "step",
)

VERIFY = "verify"
ENROL = "enrol"
# The session's key for a sign-in waiting for its code.
PENDING_KEY = "backoffice_pending_sign_in"
# Seconds between the right password and the code, at most.
PENDING_MAX_AGE = 300


def step(request: HttpRequest, *, accounts: tuple[Account, ...]) -> str | None:
    """What the signed-in person must do before anything else: ``VERIFY`` (this session has not passed the second
    step and they have a device), ``ENROL`` (one of ``accounts`` requires two factors and they have none), else
    None."""
    user: Any = request.user
    if is_verified(request):
        return None
    if two_factor.is_enrolled(user=user):
        return VERIFY
    if two_factor.is_required(accounts=accounts):
        return ENROL
    return None


def is_verified(request: HttpRequest) -> bool:
    """Whether this session passed the second step (django-otp's ``OTPMiddleware`` says so)."""
    verified = getattr(request.user, "is_verified", None)
    return bool(verified is not None and verified())


def begin(request: HttpRequest, *, user: Any) -> None:
    """Keep ``user`` (their password was right) as waiting for their code, in a new session key."""
    request.session.cycle_key()
    request.session[PENDING_KEY] = {
        "user": user.pk,
        "backend": getattr(user, "backend", "django.contrib.auth.backends.ModelBackend"),
        "hash": user.get_session_auth_hash(),
        "at": int(time.time()),
    }


def pending_user(request: HttpRequest) -> Any | None:
    """The person waiting for their code in this session, while the wait is valid; else None."""
    pending = request.session.get(PENDING_KEY)
    if not isinstance(pending, dict):
        return None
    if (
        not isinstance(pending.get("at"), int)
        or not isinstance(pending.get("user"), int)
        or time.time() - pending["at"] > PENDING_MAX_AGE
    ):
        request.session.pop(PENDING_KEY, None)
        return None
    user = get_user_model()._default_manager.filter(pk=pending["user"], is_active=True).first()
    if user is None or not constant_time_compare(str(pending.get("hash", "")), user.get_session_auth_hash()):
        request.session.pop(PENDING_KEY, None)
        return None
    user.backend = str(pending.get("backend") or "django.contrib.auth.backends.ModelBackend")
    return user


def finish(request: HttpRequest, *, user: Any, device: Device | None) -> None:
    """Sign the person in (when they were pending) and mark this session as having passed the second step with
    ``device`` (None: the person has no device any more; the password was enough)."""
    request.session.pop(PENDING_KEY, None)
    if not request.user.is_authenticated or request.user.pk != user.pk:
        login(request, user, backend=user.backend)
    if device is not None:
        otp_login(request, device)
