"""Database constraints the apps' models share."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


def exactly_one_not_null(first: str, second: str, *, name: str) -> models.CheckConstraint:
    """A row sets exactly one of two nullable columns: it is one thing or the other, never both, never neither."""
    return models.CheckConstraint(
        condition=(
            Q(**{f"{first}__isnull": False, f"{second}__isnull": True})
            | Q(**{f"{first}__isnull": True, f"{second}__isnull": False})
        ),
        name=name,
    )
