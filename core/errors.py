"""The one error hierarchy of the services and the JSON body of every refused request;
``core.api.errors.exception_handler`` maps the hierarchy to that body."""

from __future__ import annotations

from typing import Any


def error_body(message: str, errors: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """The JSON body of every refused request: ``{"status": "ERROR", "message", "errors"?}``."""
    body: dict[str, Any] = {"status": "ERROR", "message": message}
    if errors:
        body["errors"] = errors
    return body


class ServiceError(Exception):
    """A request the service refuses. ``field`` names the offending input where there is one."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code:
            self.code = code

    def errors(self) -> list[dict[str, str]]:
        if self.field is None:
            return []
        return [{"field": self.field, "message": self.message, "code": self.code}]


class NotFound(ServiceError):
    """No such object in the caller's account (another account's is not found either)."""

    status_code, code = 404, "not_found"


class Conflict(ServiceError):
    """The object's state does not allow the change (an item still pending, a closed period)."""

    status_code, code = 409, "conflict"


class PayloadTooLarge(ServiceError):
    """A body or a list over its bound, refused as a whole."""

    status_code, code = 413, "too_large"


class UnsupportedMediaType(ServiceError):
    """A body that is not JSON."""

    status_code, code = 415, "unsupported_media_type"


class InvalidInput(ServiceError):
    """A body with one or more field errors (``[{"field", "message", "code"}]``, e.g. a schema ``Report``)."""

    def __init__(self, errors: list[dict[str, str]], message: str = "The request is invalid.") -> None:
        super().__init__(message, field=errors[0]["field"] if errors else None, code="invalid")
        self.field_errors = errors

    def errors(self) -> list[dict[str, str]]:
        return self.field_errors
