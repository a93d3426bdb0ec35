"""Reading a request's JSON body, as the request middleware parsed it (``core.middleware``: bounded, once)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from rest_framework.request import Request

from core import jsonparse
from core.errors import ServiceError, UnsupportedMediaType
from core.middleware import is_json, media_type, parsed_body


def read_json(request: Request | HttpRequest) -> jsonparse.Parsed:
    """The body as the request middleware parsed it, refused values reported as problems: import batches keep
    their good items; every other body with a problem was refused already."""
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
