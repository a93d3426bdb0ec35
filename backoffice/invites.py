"""Invitations: a new member gets an e-mail with a link where they set their password, then they are signed in.

The link carries a token signed with the site's secret (``django.core.signing.TimestampSigner``, its own salt):
the account and the person by id, the time it was made, and a fingerprint of the person's password as it was
then. It is valid ``BACKOFFICE_INVITE_MAX_AGE_SECONDS`` after it was made and once only: setting the password
changes the fingerprint. Nothing about it is stored; removing the member ends it too.
"""

from __future__ import annotations

import smtplib
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from accounts import selectors
from accounts.models import Account, Membership

__all__ = ("invitation", "invite_token", "send_invitation")

_SALT = "backoffice.invite"


def _fingerprint(user: Any) -> str:
    """Changes when the person's password does (an unusable one included), without revealing its hash."""
    return salted_hmac(_SALT, user.password, algorithm="sha256").hexdigest()[:32]


def invite_token(*, account: Account, membership: Membership) -> str:
    """The token of a new invitation link to ``account`` for the member."""
    payload = {"a": account.pk, "u": membership.user_id, "p": _fingerprint(membership.user)}
    return signing.TimestampSigner(salt=_SALT).sign_object(payload)


def invitation(token: str) -> Membership | None:
    """The membership an invitation link is for, while it is valid: signed here, not older than the setting, not
    used (the person's password is as it was), the person still a member and active; else None."""
    try:
        payload = signing.TimestampSigner(salt=_SALT).unsign_object(
            token, max_age=settings.BACKOFFICE_INVITE_MAX_AGE_SECONDS
        )
    except signing.BadSignature:  # expired ones too (SignatureExpired)
        return None
    if not isinstance(payload, dict) or not all(isinstance(payload.get(k), int) for k in ("a", "u")):
        return None
    membership = selectors.membership(account_id=payload["a"], user_id=payload["u"])
    if membership is None or not membership.user.is_active:
        return None
    if not constant_time_compare(str(payload.get("p", "")), _fingerprint(membership.user)):
        return None
    return membership


def send_invitation(request: HttpRequest, *, account: Account, membership: Membership) -> bool:
    """E-mail the member that they were added: with an invitation link when they have no password yet, else with
    the sign-in page. Whether the e-mail went out (a failing mail server is the caller's message to show)."""
    user = membership.user
    context: dict[str, Any] = {
        "account": account.name or account.identifier,
        "role": membership.get_role_display(),
        "sign_in": request.build_absolute_uri(reverse("backoffice:login")),
    }
    if not user.has_usable_password():
        token = invite_token(account=account, membership=membership)
        context["link"] = request.build_absolute_uri(reverse("backoffice:invite", args=[token]))
        until = timezone.now() + timedelta(seconds=settings.BACKOFFICE_INVITE_MAX_AGE_SECONDS)
        context["until"] = f"{until:%Y-%m-%d %H:%M} UTC"
    subject = _("You are a member of %(account)s") % {"account": context["account"]}
    body = render_to_string("backoffice/members/invite_email.txt", context)
    try:
        send_mail(subject, body, None, [user.email or user.get_username()])
    except (OSError, smtplib.SMTPException):
        return False
    return True
