"""Paginators for lists over tables that only grow (import items, orders, the export and integration logs, sales).

Django's paginator counts the whole filtered list (``COUNT(*)``) on every page; over millions of rows that count
costs more than the page itself and grows with history. ``EstimatedCountPaginator`` counts exactly while the list
is small and, on PostgreSQL, takes the planner's estimate once it is large (the list's count and page numbers are
then approximate, as on the platforms with years of history in their lists).
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from django.core.paginator import Paginator
from django.db import connections

# Below this many rows (by the planner's estimate) a list is counted exactly: a count of this many index entries
# costs about a millisecond.
EXACT_COUNT_LIMIT = 10_000


def planner_rows(queryset: Any) -> int | None:
    """The planner's estimate of the rows ``queryset`` returns; None where the database gives none (not
    PostgreSQL)."""
    if connections[queryset.db].vendor != "postgresql":
        return None
    plan = json.loads(queryset.order_by().explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


class EstimatedCountPaginator(Paginator):
    """Counts exactly up to ``EXACT_COUNT_LIMIT`` rows; beyond that, on PostgreSQL, the planner's estimate.

    ``estimated`` tells which: an estimate may be off by some percent either way, so the last page of a long list
    can hold fewer rows than a full page, or none (the admin then shows the list's first page with an error note)."""

    estimated = False

    @cached_property
    def count(self) -> int:
        object_list: Any = self.object_list
        if hasattr(object_list, "explain"):
            estimate = planner_rows(object_list)
            if estimate is not None and estimate >= EXACT_COUNT_LIMIT:
                self.estimated = True
                return estimate
        return super().count
