"""What every API shares: the JSON error body (one place), pagination, reading a JSON body within its
limits, and the base view of the POS API (``/api/v1/pos/...``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.views.defaults import page_not_found
from rest_framework import exceptions, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.authentication import ApiKeyAuthentication, ApiPrincipal, HasPosScope
from accounts.models import Account
from core import budget, jsonparse
from core.errors import ServiceError, UnsupportedMediaType, error_body
from core.middleware import is_json, media_type, parsed_body

# Beyond this an offset is no page of any real list, and a larger one overflows SQLite's integer (a 500).
MAX_OFFSET = 1_000_000_000


def _whole_number(request: Request, name: str, *, minimum: int, maximum: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if not (len(raw) <= len(str(maximum)) and raw.isascii() and raw.isdigit()) or not minimum <= int(raw) <= maximum:
        raise ServiceError(f"'{name}' must be a whole number from {minimum} to {maximum}", field=name, code="invalid")
    return int(raw)


# Query parameters that carry a credential. A page link keeps every other parameter (account, integration,
# filters) and drops these: links are logged, cached, pasted and shared, and a key must not travel with them.
SECRET_QUERY_PARAMETERS = ("apikey", "api_key", "accountkey", "token", "access_token", "secret", "password")


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=``; answers ``{count, next, previous, results}``. A ``limit`` above ``max_limit`` is
    served as ``max_limit``; a value that is not a whole number in range is a 400 naming the parameter. The
    ``next`` and ``previous`` links carry no credential: a client sends its key again with them (query or
    ``Authorization`` header)."""

    default_limit = 50
    max_limit = 500

    def get_limit(self, request: Request) -> int:
        limit = _whole_number(request, self.limit_query_param, minimum=1, maximum=MAX_OFFSET)
        return self.default_limit if limit is None else min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _whole_number(request, self.offset_query_param, minimum=0, maximum=MAX_OFFSET) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            minimum = 1 if parameter["name"] == self.limit_query_param else 0
            parameter["schema"].update(minimum=minimum, maximum=MAX_OFFSET)
            parameter["description"] += f" A whole number from {minimum} to {MAX_OFFSET}; other values are a 400."
        return parameters

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


def read_json(request: Request | HttpRequest) -> jsonparse.Parsed:
    """The body as the request middleware parsed it (``core.middleware``: bounded, once), refused values reported
    as problems: import batches keep their good items; every other body with a problem was refused already."""
    raw_request = request._request if isinstance(request, Request) else request
    parsed = parsed_body(raw_request)
    if parsed is None:
        media = media_type(raw_request)
        if media and not is_json(media):
            raise UnsupportedMediaType("Content-Type must be application/json", field="Content-Type")
        raise ServiceError("The request body is empty", field="body", code="empty")
    return parsed


def read_json_body(request: Request | HttpRequest) -> Any:
    """The body as JSON (numbers with a fraction as Decimal); any refused value refuses it (400, fields named)."""
    parsed = read_json(request)
    jsonparse.refuse(parsed.problems)
    return parsed.value


class PosView(APIView):
    """Base of the POS API (``/api/v1/pos/...``): keys with the ``pos`` scope; the body is read by
    ``read_json_body`` (parsed by the request middleware, within ``API_MAX_BODY_BYTES``). The integrator calls
    a request makes share ``POS_INTEGRATION_BUDGET_SECONDS`` (``core.budget``): a shop app never waits on a dead
    integrator for long, and neither does the web worker serving it."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasPosScope]
    parser_classes: list[type] = []

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        seconds = settings.POS_INTEGRATION_BUDGET_SECONDS
        if seconds <= 0:
            return super().dispatch(request, *args, **kwargs)
        with budget.limit(seconds):
            return super().dispatch(request, *args, **kwargs)

    @property
    def account(self) -> Account:
        principal = self.request.user
        assert isinstance(principal, ApiPrincipal)  # HasPosScope let the request through
        return principal.account

    def body(self) -> Any:
        return read_json_body(self.request)
