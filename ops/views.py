"""Health and metrics endpoints (docs/operations.md, Observability). No session, no API key: see the README."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from accounts import auth_failures
from core.errors import error_body
from ops import health, metrics


@never_cache
@require_safe
def live(request: HttpRequest) -> JsonResponse:
    """The process answers. Nothing else is checked: a restart would not cure a database outage."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def ready(request: HttpRequest) -> JsonResponse:
    """200 when the database, migrations, broker and beat heartbeat are fine (status ``ok``, or ``degraded``
    naming the worker, beat or export queue checks that fail); 503 (status ``error``) naming what is not."""
    report = health.report()
    body = {"status": report.status, "checks": report.checks, "degraded": report.degraded}
    return JsonResponse(body, status=200 if report.ready else 503)


@never_cache
@require_safe
def prometheus(request: HttpRequest) -> HttpResponse:
    """The Prometheus exposition; behind ``Authorization: Bearer <METRICS_TOKEN>`` when that is set (always in
    production). Wrong tokens count as failed authentications of the client's address (``accounts.auth_failures``).
    """
    token: str = settings.METRICS_TOKEN
    if token:
        subjects = auth_failures.subjects(request)
        presented = request.headers.get("Authorization", "")
        scheme, _, value = presented.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            wait = auth_failures.record_failure(subjects)
            if wait:
                return _too_many_failures(wait)
            response = JsonResponse(error_body("A valid metrics bearer token is required."), status=401)
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
        wait = auth_failures.seconds_locked(subjects)
        if wait:
            return _too_many_failures(wait)
    return HttpResponse(metrics.render(), content_type=CONTENT_TYPE_LATEST)


def _too_many_failures(wait: int) -> JsonResponse:
    response = JsonResponse(error_body(auth_failures.TOO_MANY_FAILURES), status=429)
    response["Retry-After"] = str(wait)
    return response
