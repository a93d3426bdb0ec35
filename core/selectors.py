"""The filter step the back-office API's list selectors share (the import log, the orders, the export log).

Their query parameters are optional: a blank one is no filter, and a parameter may name a related row by its
identifier, so the selector maps it to the lookup that reaches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def filter_given(
    queryset: QuerySet[M], filters: Mapping[str, object], *, lookups: Mapping[str, str] | None = None
) -> QuerySet[M]:
    """``queryset`` narrowed by every filter whose value is given (not blank); a filter named in ``lookups``
    is applied under that lookup (``{"stock_location": "stock_location__identifier"}``), any other under its
    own name."""
    lookups = lookups or {}
    given = {lookups.get(name, name): value for name, value in filters.items() if value}
    return queryset.filter(**given) if given else queryset
