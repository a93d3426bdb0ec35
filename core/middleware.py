"""The one layer where input enters: every request's URL and JSON body are bounded and parsed here, once,
before any view, serializer or query sees them.

URL. A path segment (an id, an identifier) is at most ``MAX_PATH_SEGMENT`` characters and the path at most
``MAX_PATH_LENGTH``; the query string at most ``MAX_QUERY_STRING`` bytes and Django's
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` parameters, each parameter value at most ``MAX_QUERY_VALUE`` characters; no NUL
character anywhere (PostgreSQL cannot compare a text holding one, so it would be a 500 deep inside a query).

Body. Under ``/imports/`` and ``/api/``, a POST, PUT, PATCH or DELETE that carries a body must declare
``application/json`` (415 otherwise), must fit the limit of its surface (``IMPORT_MAX_BODY_BYTES`` for imports,
``API_MAX_BODY_BYTES`` for the rest; 413, judged on ``Content-Length`` before a byte is read), must hold at
most ``MAX_IMPORT_VALUES`` or ``MAX_API_VALUES`` values (413, counted in the bytes before parsing) and is parsed by
``core.jsonparse``: a number, text or nesting it refuses is a 400 naming the field. Import batches are the
exception: there a refused value fails only the item that holds it, so the parsed body (with its problems) is
handed to the view. Views read the result with ``parsed_body``; nothing parses a body twice.

Every refusal under those prefixes is the documented JSON error body; elsewhere (the admin) a plain 400/404.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound, JsonResponse

from core import jsonparse
from core.errors import NotFound, PayloadTooLarge, ServiceError, UnsupportedMediaType, error_body

MAX_PATH_LENGTH = 2048
MAX_PATH_SEGMENT = 255
MAX_QUERY_STRING = 16 * 1024
MAX_QUERY_VALUE = 4096
JSON_PREFIXES = ("/imports/", "/api/")
IMPORT_PREFIX = "/imports/"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Values per body, counted by their separators before anything is parsed: a real import order is ~30 values in
# ~850 bytes, a checkout line ~40; ``1.5,`` repeated is a value every 4 bytes, which these caps refuse unread.
MAX_IMPORT_VALUES = 1_000_000
MAX_API_VALUES = 200_000
_PARSED = "bounded_json"


def _refusal(request: HttpRequest, error: ServiceError) -> HttpResponse:
    if request.path_info.startswith(JSON_PREFIXES):
        return JsonResponse(error_body(error.message, error.errors()), status=error.status_code)
    if error.status_code == 404:
        return HttpResponseNotFound(error.message, content_type="text/plain; charset=utf-8")
    return HttpResponseBadRequest(error.message, content_type="text/plain; charset=utf-8")


def url_problem(request: HttpRequest) -> ServiceError | None:
    """Why the request's URL is refused, or None."""
    path = request.path_info
    if len(path) > MAX_PATH_LENGTH or any(len(segment) > MAX_PATH_SEGMENT for segment in path.split("/")):
        # No object has such an id, so "not found" is the truthful answer (and the one a client expects).
        return NotFound(f"No object at a path segment of more than {MAX_PATH_SEGMENT} characters", field="path")
    if "\x00" in path:
        return NotFound("No object at a path with a NUL character", field="path")
    if len(request.META.get("QUERY_STRING", "")) > MAX_QUERY_STRING:
        return ServiceError(f"The query string is longer than {MAX_QUERY_STRING} bytes", field="query", code="too_long")
    try:
        query = request.GET
    except TooManyFieldsSent:
        message = f"The query string holds more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} parameters"
        return ServiceError(message, field="query", code="too_many_fields")
    for name, values in query.lists():
        shown = name[:64]
        if "\x00" in name or any("\x00" in value for value in values):
            message = f"The query parameter {shown!r} must not contain NUL characters"
            return ServiceError(message, field=shown, code="invalid_text")
        if any(len(value) > MAX_QUERY_VALUE for value in values):
            message = f"The query parameter {shown!r} must be at most {MAX_QUERY_VALUE} characters"
            return ServiceError(message, field=shown, code="too_long")
    return None


def media_type(request: HttpRequest) -> str:
    return request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()


def is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def body_limit(request: HttpRequest) -> int:
    return (
        settings.IMPORT_MAX_BODY_BYTES if request.path_info.startswith(IMPORT_PREFIX) else settings.API_MAX_BODY_BYTES
    )


def _declared_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def read_body(request: HttpRequest) -> None:
    """Bound, read and parse the JSON body of ``request`` (see the module docstring); raises ServiceError."""
    declared = _declared_length(request)
    if declared == 0:
        return  # no body: a view that needs one answers "empty" (400) or a wrong content type (415)
    limit = body_limit(request)
    if declared > limit:
        raise PayloadTooLarge(f"The body is larger than the limit of {limit} bytes", field="body")
    if not is_json(media_type(request)):
        raise UnsupportedMediaType("Content-Type must be application/json", field="Content-Type")
    raw = request.body  # at most ``declared`` bytes, which is within the limit
    if not raw.strip():
        return
    max_values = MAX_IMPORT_VALUES if request.path_info.startswith(IMPORT_PREFIX) else MAX_API_VALUES
    if raw.count(b",") >= max_values:
        raise PayloadTooLarge(f"The body holds more than {max_values} values", field="body", code="too_many_values")
    parsed = jsonparse.parse(raw)
    if parsed.problems and not request.path_info.startswith(IMPORT_PREFIX):
        jsonparse.refuse(parsed.problems)
    setattr(request, _PARSED, parsed)


def parsed_body(request: HttpRequest) -> jsonparse.Parsed | None:
    """The body as ``read_body`` parsed it, or None when the request carried none."""
    return getattr(request, _PARSED, None)


class BoundedRequestMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = url_problem(request)
        if problem is not None:
            return _refusal(request, problem)
        if request.method in BODY_METHODS and request.path_info.startswith(JSON_PREFIXES):
            try:
                read_body(request)
            except ServiceError as exc:
                return _refusal(request, exc)
        return self.get_response(request)
