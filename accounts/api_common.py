"""What every API shares: the JSON error body (one place), pagination, reading a JSON body within its
limits, and the base view of the POS API (``/api/v1/pos/...``)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.authentication import ApiKeyAuthentication, ApiPrincipal, HasPosScope
from accounts.errors import PayloadTooLarge, ServiceError, UnsupportedMediaType
from accounts.models import Account

# Query parameters that carry a credential. A page link keeps every other parameter (account, integration,
# filters) and drops these: links are logged, cached, pasted and shared, and a key must not travel with them.
SECRET_QUERY_PARAMETERS = ("apikey", "api_key", "accountkey", "token", "access_token", "secret", "password")


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=``; answers ``{count, next, previous, results}``. The ``next`` and ``previous`` links
    carry no credential: a client sends its key again with them (query or ``Authorization`` header)."""

    default_limit = 50
    max_limit = 500

    def get_next_link(self) -> str | None:
        return _without_secrets(super().get_next_link())

    def get_previous_link(self) -> str | None:
        return _without_secrets(super().get_previous_link())


def _without_secrets(url: str | None) -> str | None:
    if url is None:
        return None
    for name in SECRET_QUERY_PARAMETERS:
        url = remove_query_param(url, name)
    return url


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


def error_body(message: str, errors: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The JSON body of every refused request: ``{"status": "ERROR", "message", "errors"?}``."""
    body: dict[str, Any] = {"status": "ERROR", "message": message}
    if errors:
        body["errors"] = errors
    return body


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        return Response(error_body(exc.message, exc.errors()), status=exc.status_code)
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


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: a JSON body under the API prefixes, Django's page elsewhere."""
    if request.path.startswith(("/imports/", "/api/")):
        return JsonResponse(error_body(f"No endpoint at {request.path[:200]}"), status=404)
    return page_not_found(request, exception or Http404())


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def read_json_body(request: Request) -> Any:
    """The body as JSON (numbers with a fraction as Decimal), within the configured size limit."""
    media_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    limit = settings.IMPORT_MAX_BODY_BYTES
    empty = ServiceError("The request body is empty", field="body", code="empty")
    no_length = request.META.get("CONTENT_LENGTH") in (None, "", "0")
    if not media_type and no_length and not request._request.read(limit + 1).strip():
        # No body and no Content-Type: a missing body (400, documented), not a content-type dispute.
        raise empty
    if media_type != "application/json" and not media_type.endswith("+json"):
        raise UnsupportedMediaType("Content-Type must be application/json", field="Content-Type")
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    too_large = PayloadTooLarge(f"The body is larger than the limit of {limit} bytes", field="body")
    if declared > limit:
        raise too_large
    raw = request._request.read(limit + 1)
    if len(raw) > limit:
        raise too_large
    if not raw.strip():
        raise empty
    try:
        return json.loads(raw, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ServiceError(f"The body is not valid JSON: {str(exc)[:200]}", field="body", code="invalid_json") from None


class PosView(APIView):
    """Base of the POS API (``/api/v1/pos/...``): keys with the ``pos`` scope; the body is read by
    ``read_json_body`` (numbers with a fraction as Decimal, within ``IMPORT_MAX_BODY_BYTES``)."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasPosScope]
    parser_classes: list[type] = []

    @property
    def account(self) -> Account:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)  # HasPosScope let the request through
        return principal.account

    def body(self) -> Any:
        return read_json_body(self.request)
