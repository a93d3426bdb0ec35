"""Admin building blocks the apps' admins share and that need no app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin

# How much of a failure reason a log's list shows (the import log, the export log); the detail page has it all.
REASON_CHARS = 120


def field_display(field: str, render: Callable[[Any], Any], *, description: str = "") -> Callable[[Any, Any], Any]:
    """A read-only admin column or detail field showing ``render(obj.<field>)`` (a stored JSON document
    pretty-printed, say), titled ``description`` or the field's name; assigned in the admin class's body, it
    replaces a method that only does that."""

    @admin.display(description=description or field.replace("_", " "))
    def show(model_admin: Any, obj: Any) -> Any:
        return render(getattr(obj, field))

    return show
