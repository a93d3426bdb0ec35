"""Import log reads. Every function takes the account first."""

from __future__ import annotations

from typing import TypedDict, Unpack
from uuid import UUID

from django.db.models import QuerySet

from accounts.models import Account
from core.selectors import filter_given
from imports.models import ImportItem


class ImportLogFilters(TypedDict, total=False):
    """The import log's optional filters; ``integration`` is the integration's identifier."""

    integration: str | None
    status: str | None
    kind: str | None
    identifier: str | None
    request_id: UUID | None


def import_items(*, account: Account, **filters: Unpack[ImportLogFilters]) -> QuerySet[ImportItem]:
    """The import log of the account (every integration unless one is named), newest first."""
    queryset = ImportItem.objects.filter(account=account).select_related("integration", "stock_location")
    queryset = filter_given(queryset, filters, lookups={"integration": "integration__identifier"})
    return queryset.order_by("-created_at", "-id")
