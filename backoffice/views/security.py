"""A person's own security page: two-factor sign-in on (enrol with an authenticator app, confirmed by a first
code), new recovery codes, off (with a code). Every member may use it for themselves, whatever their role; a
person whom an account requires to enrol may use nothing else until they have."""

from __future__ import annotations

from base64 import b32encode
from typing import Any

import qrcode
import qrcode.image.svg
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django_otp import login as otp_login

from accounts import two_factor
from accounts.policy import Action
from backoffice.members import member_view
from backoffice.views.auth import CodeForm
from core.errors import ServiceError

# The session's key for the secret being enrolled (until its first code confirms it).
ENROL_KEY = "backoffice_two_factor_secret"


def _qr_svg(uri: str) -> str:
    """``uri`` as a QR code, an inline SVG element (drawn here: nothing is fetched from elsewhere)."""
    image = qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage, box_size=8, border=4)
    return str(image.to_string(encoding="unicode"))


def _secret_text(secret: str) -> str:
    """The secret as an app's "enter a key" asks for it: base32, in groups of four."""
    text = b32encode(bytes.fromhex(secret)).decode()
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def _page(
    request: HttpRequest,
    *,
    form: CodeForm | None = None,
    off_form: CodeForm | None = None,
    codes: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    user: Any = request.user
    member = request.member  # type: ignore[attr-defined]
    state = two_factor.status(user=user)
    context: dict[str, Any] = {
        "state": state,
        "codes": codes or [],
        "required": two_factor.is_required(accounts=member.accounts),
        "must_enrol": not state.enrolled and two_factor.is_required(accounts=member.accounts),
        "form": form or CodeForm(),
        "off_form": off_form or CodeForm(auto_id="off_%s"),
    }
    if not state.enrolled:
        secret = request.session.get(ENROL_KEY)
        if not isinstance(secret, str) or len(secret) != 40:
            secret = two_factor.new_secret()
            request.session[ENROL_KEY] = secret
        uri = two_factor.enrolment_device(user=user, secret=secret).config_url
        context.update(qr=mark_safe(_qr_svg(uri)), secret_text=_secret_text(secret), uri=uri)  # noqa: S308
    response = render(request, "backoffice/security.html", context, status=status)
    add_never_cache_headers(response)  # the secret and the codes are on it
    return response


@never_cache
@member_view(Action.VIEW, methods=("GET", "HEAD", "POST"), enrolling=True)
def security(request: HttpRequest) -> HttpResponse:
    """GET: the page (the QR code and the secret while two-factor sign-in is off); POST: confirm the enrolment
    with the app's first code, which answers with the recovery codes, shown this once."""
    if request.method != "POST":
        return _page(request)
    if two_factor.is_enrolled(user=request.user):
        return HttpResponseRedirect(reverse("backoffice:security"))
    form = CodeForm(request.POST)
    secret = request.session.get(ENROL_KEY)
    if form.is_valid() and isinstance(secret, str):
        try:
            device, codes = two_factor.enrol(user=request.user, secret=secret, code=form.cleaned_data["code"])
        except ServiceError:
            form.add_error("code", _("That code is not the one the app shows: try the next one."))
        else:
            request.session.pop(ENROL_KEY, None)
            otp_login(request, device)  # this session has just proved the second factor
            messages.success(request, _("Two-factor sign-in is on."))
            return _page(request, codes=codes)
    elif form.is_valid():
        form.add_error("code", _("The page was too old: scan the code below again."))
    return _page(request, form=form, status=400)


@never_cache
@member_view(Action.VIEW, methods=("POST",))
def security_codes(request: HttpRequest) -> HttpResponse:
    """New recovery codes in place of the old ones, shown this once."""
    try:
        codes = two_factor.renew_recovery_codes(user=request.user)
    except ServiceError:
        messages.error(request, _("Two-factor sign-in is off: there are no recovery codes."))
        return HttpResponseRedirect(reverse("backoffice:security"))
    messages.success(request, _("New recovery codes: the old ones no longer work."))
    return _page(request, codes=codes)


@never_cache
@member_view(Action.VIEW, methods=("POST",))
def security_off(request: HttpRequest) -> HttpResponse:
    """Turn two-factor sign-in off, with a code of the app or a recovery code."""
    form = CodeForm(request.POST, auto_id="off_%s")
    if form.is_valid():
        code = form.cleaned_data["code"]
        wait = two_factor.wait_seconds(user=request.user, code=code)
        if wait:
            text = _("Too many wrong codes: try again in %(seconds)s seconds.") % {"seconds": wait}
            form.add_error("code", text)
        else:
            try:
                two_factor.turn_off(user=request.user, code=code)
            except ServiceError:
                form.add_error("code", _("That code is not right."))
            else:
                messages.success(request, _("Two-factor sign-in is off."))
                return HttpResponseRedirect(reverse("backoffice:security"))
    return _page(request, off_form=form, status=400)
