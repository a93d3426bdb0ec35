"""Lists of any length, cheap: pages by the last id seen (``?before=``), never an offset or a count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

# Rows a page shows.
PAGE_SIZE = 50


@dataclass(frozen=True)
class Page:
    rows: list[Any]
    before: int | None  # the id to ask for the next (older) page with, when there is one
    first: bool  # this is the newest page


def newest_first(queryset: QuerySet[Any], request: HttpRequest, *, size: int = PAGE_SIZE) -> Page:
    """One page of ``queryset`` ordered by descending id: the rows below ``?before=`` (an index range scan from
    that id down, whatever the table's size)."""
    before = request.GET.get("before", "")
    rows_of = queryset.order_by("-pk")
    if before.isdigit():
        rows_of = rows_of.filter(pk__lt=int(before))
    rows = list(rows_of[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Page(rows=rows, before=rows[-1].pk if more and rows else None, first=not before.isdigit())
