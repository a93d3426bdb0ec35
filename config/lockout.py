"""django-axes' answer to a locked-out sign-in (``AXES_LOCKOUT_CALLABLE``): the back-office's page for a sign-in
under /backoffice/, the admin's otherwise, each saying how long the lock lasts; the status is axes' own
(``AXES_HTTP_RESPONSE_CODE``, 429)."""

from __future__ import annotations

from typing import Any

from axes.helpers import get_cool_off
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

BACKOFFICE_TEMPLATE = "backoffice/login_locked_out.html"
ADMIN_TEMPLATE = "admin/login_locked_out.html"


def locked_out(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    backoffice = request.path.startswith(reverse("backoffice:dashboard"))
    return render(
        request,
        BACKOFFICE_TEMPLATE if backoffice else ADMIN_TEMPLATE,
        {"cooloff_timedelta": get_cool_off(request)},
        status=getattr(settings, "AXES_HTTP_RESPONSE_CODE", 429),
    )
