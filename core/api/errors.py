"""The one place the error hierarchy (``core.errors``) becomes a JSON answer: DRF's exception handler
(``REST_FRAMEWORK["EXCEPTION_HANDLER"]``), the 404 of a path no endpoint serves (``handler404``), and, under the
JSON prefixes, Django's own 400 (a ``SuspiciousOperation``: too many fields, a bad host) and 500 (a bug), which
would otherwise be HTML pages to a client that only reads JSON."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import bad_request as html_bad_request
from django.views.defaults import page_not_found
from django.views.defaults import server_error as html_server_error
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import ServiceError, error_body
from core.middleware import JSON_PREFIXES


def flatten_errors(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """DRF's nested error detail as ``[{"field": "a.b[0].c", "message": ...}]``."""
    if isinstance(detail, dict):
        out: list[dict[str, str]] = []
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            out.extend(flatten_errors(value, path))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [{"field": prefix, "message": str(item)} for item in detail]
        out = []
        for i, item in enumerate(detail):
            out.extend(flatten_errors(item, f"{prefix}[{i}]"))
        return out
    return [{"field": prefix, "message": str(detail)}]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        refused = Response(error_body(exc.message, exc.errors()), status=exc.status_code)
        wait = getattr(exc, "wait", None)  # a rate limit's (core.ratelimit.RateLimited)
        if wait:
            refused["Retry-After"] = str(wait)
        return refused
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = error_body("The request is invalid.", flatten_errors(exc.detail))
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = str(detail) if not isinstance(detail, dict | list) else "The request failed."
        response.data = error_body(message)
    if response.status_code == status.HTTP_403_FORBIDDEN and isinstance(exc, exceptions.NotAuthenticated):
        response.status_code = status.HTTP_401_UNAUTHORIZED
    return response


def _json(request: HttpRequest) -> bool:
    return request.path.startswith(JSON_PREFIXES)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: a JSON body under the API prefixes, Django's page elsewhere."""
    if _json(request):
        return JsonResponse(error_body(f"No endpoint at {request.path[:200]}"), status=404)
    return page_not_found(request, exception or Http404())


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400 (a ``SuspiciousOperation`` no view caught): the JSON body under the API prefixes. The reason is
    Django's own and names no input value, so it is shown."""
    if _json(request):
        return JsonResponse(error_body(f"The request is refused: {exception or 'bad request'}"[:300]), status=400)
    return html_bad_request(request, exception or Exception())


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the JSON body under the API prefixes (no detail: the log has it under the request id)."""
    if _json(request):
        return JsonResponse(error_body("Internal error: the request could not be completed."), status=500)
    return html_server_error(request)
