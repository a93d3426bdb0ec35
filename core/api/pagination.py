"""The pagination of every list of the API (``REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"]``)."""

from __future__ import annotations

from typing import Any

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.utils.urls import remove_query_param

from core.api.credentials import SECRET_QUERY_PARAMETERS
from core.errors import ServiceError

# Beyond this an offset is no page of any real list, and a larger one overflows SQLite's integer (a 500).
MAX_OFFSET = 1_000_000_000


def _whole_number(request: Request, name: str, *, minimum: int, maximum: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if not (len(raw) <= len(str(maximum)) and raw.isascii() and raw.isdigit()) or not minimum <= int(raw) <= maximum:
        raise ServiceError(f"'{name}' must be a whole number from {minimum} to {maximum}", field=name, code="invalid")
    return int(raw)


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

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paginated: dict[str, Any] = super().get_paginated_response_schema(schema)
        described = {
            "count": "How many items the whole list has, its filters applied.",
            "next": "The next page's URL, without the API key (send it again); null on the last page.",
            "previous": "The previous page's URL, without the API key; null on the first page.",
            "results": f"This page's items: `limit` of them (default {self.default_limit}, at most {self.max_limit}).",
        }
        for name, text in described.items():
            # drf-spectacular also asks with a placeholder object as ``schema`` (to place an example): left as is.
            prop = paginated["properties"][name]
            if isinstance(prop, dict):
                paginated["properties"][name] = {**_null_as_type(prop), "description": text}
        return paginated

    def get_next_link(self) -> str | None:
        return _without_secrets(super().get_next_link())

    def get_previous_link(self) -> str | None:
        return _without_secrets(super().get_previous_link())


def _null_as_type(schema: dict[str, Any]) -> dict[str, Any]:
    """DRF's ``nullable`` link (OpenAPI 3.0) as OpenAPI 3.1 says it: null among the types."""
    if not schema.get("nullable"):
        return schema
    out = {key: value for key, value in schema.items() if key != "nullable"}
    return {**out, "type": [out["type"], "null"]}


def _without_secrets(url: str | None) -> str | None:
    if url is None:
        return None
    for name in SECRET_QUERY_PARAMETERS:
        url = remove_query_param(url, name)
    return url
