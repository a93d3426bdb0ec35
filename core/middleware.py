"""Bounds on what a URL can carry, checked once for every request before any view or query sees it.

A path segment (an id, an identifier) is at most ``MAX_PATH_SEGMENT`` characters and the path at most
``MAX_PATH_LENGTH``; the query string at most ``MAX_QUERY_STRING`` bytes, each parameter value at most
``MAX_QUERY_VALUE`` characters; no NUL character anywhere in either (PostgreSQL cannot compare a text with
one, so it would be a 500 deep inside a query). Under ``/imports/`` and ``/api/`` the refusal is the documented
JSON body naming the parameter; elsewhere (the admin) a plain 400/404.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound, JsonResponse

from core.errors import error_body

MAX_PATH_LENGTH = 2048
MAX_PATH_SEGMENT = 255
MAX_QUERY_STRING = 16 * 1024
MAX_QUERY_VALUE = 4096
JSON_PREFIXES = ("/imports/", "/api/")


def _refusal(request: HttpRequest, status: int, message: str, field: str, code: str) -> HttpResponse:
    if request.path_info.startswith(JSON_PREFIXES):
        return JsonResponse(error_body(message, [{"field": field, "message": message, "code": code}]), status=status)
    if status == 404:
        return HttpResponseNotFound(message, content_type="text/plain; charset=utf-8")
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


def url_problem(request: HttpRequest) -> HttpResponse | None:
    """The refusal of a request whose URL breaks a bound, or None."""
    path = request.path_info
    if len(path) > MAX_PATH_LENGTH or any(len(segment) > MAX_PATH_SEGMENT for segment in path.split("/")):
        # No object has such an id, so "not found" is the truthful answer (and the one a client expects).
        return _refusal(
            request, 404, f"No object at a path segment of more than {MAX_PATH_SEGMENT} characters", "path", "not_found"
        )
    if "\x00" in path:
        return _refusal(request, 404, "No object at a path with a NUL character", "path", "not_found")
    if len(request.META.get("QUERY_STRING", "")) > MAX_QUERY_STRING:
        return _refusal(request, 400, f"The query string is longer than {MAX_QUERY_STRING} bytes", "query", "too_long")
    for name, values in request.GET.lists():
        shown = name[:64]
        if "\x00" in name or any("\x00" in value for value in values):
            return _refusal(
                request, 400, f"The query parameter {shown!r} must not contain NUL characters", shown, "invalid_text"
            )
        if any(len(value) > MAX_QUERY_VALUE for value in values):
            message = f"The query parameter {shown!r} must be at most {MAX_QUERY_VALUE} characters"
            return _refusal(request, 400, message, shown, "too_long")
    return None


class BoundedUrlMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return url_problem(request) or self.get_response(request)
