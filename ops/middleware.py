"""Request id and request metrics middleware (docs/operations.md, Observability); the Content-Security-Policy of the
HTML pages."""

from __future__ import annotations

import time
from collections.abc import Callable

from csp.middleware import CSPMiddleware
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from ops import metrics
from ops.logging import REQUEST_ID_HEADER, clean_request_id, new_request_id, request_id_var


class RequestIdMiddleware:
    """Takes ``X-Request-ID`` from the request (when acceptable) or makes one; it is in every log line of the
    request, in the Celery tasks the request publishes, and in the response header."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = clean_request_id(request.headers.get(REQUEST_ID_HEADER)) or new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        # Not reset on the way out: Django logs a 4xx/5xx answer ("django.request") after the middleware chain
        # returned. ``clear_request_id`` (on request_finished) clears it once the response is closed.
        request_id_var.set(request_id)
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response


def clear_request_id(**kwargs: object) -> None:
    request_id_var.set(None)


class MetricsMiddleware:
    """Counts requests by endpoint (the URL route, never the raw path: ids would explode the label set),
    method and status, and observes their duration."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        metrics.observe_request(
            endpoint=metrics.endpoint_of(request),
            method=request.method or "",
            status=response.status_code,
            seconds=time.perf_counter() - started,
        )
        return response


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's policy (``CONTENT_SECURITY_POLICY``) on every HTML answer: the admin, the dashboard, the API
    docs, error pages. A JSON or CSV answer runs no script in a browser, so the API's answers are left as they are
    (the policy would be built for each of them for nothing)."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        return super().process_response(request, response)
