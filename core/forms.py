"""Form fields that read JSON through the bounded parser (``core.jsonparse``), for the admin's JSON text areas."""

from __future__ import annotations

from typing import Any

from django import forms
from django.forms.fields import InvalidJSONInput, JSONString

from core import jsonparse
from core.errors import ServiceError


def _message(exc: ServiceError, invalid: str) -> str:
    """Django's own "Enter a valid JSON." for text that is not JSON; each refused value by its path otherwise."""
    errors = exc.errors()
    if errors and errors[0]["field"] != "body":
        return "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    return invalid if exc.code in ("invalid_json", "invalid_encoding") else exc.message


class BoundedJSONFormField(forms.JSONField):
    """Django's JSONField form field, with numbers, text and nesting bounded as in every request body."""

    def to_python(self, value: Any) -> Any:
        if self.disabled:
            return value
        if value in self.empty_values:
            return None
        if isinstance(value, list | dict | int | float | JSONString):
            return value
        try:
            converted = jsonparse.loads(value)
        except ServiceError as exc:
            raise forms.ValidationError(_message(exc, str(self.error_messages["invalid"])), code="invalid") from None
        return JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data: Any, initial: Any) -> Any:
        if self.disabled:
            return initial
        if data is None:
            return None
        try:
            return jsonparse.loads(data)
        except ServiceError:
            return InvalidJSONInput(data)
