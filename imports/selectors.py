"""Import log reads. Every function takes the account first."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from accounts.models import Account
from imports.models import ImportItem


def import_items(
    *,
    account: Account,
    integration: str | None = None,
    status: str | None = None,
    kind: str | None = None,
    identifier: str | None = None,
    request_id: UUID | None = None,
) -> QuerySet[ImportItem]:
    """The import log of the account (every integration unless one is named), newest first."""
    queryset = ImportItem.objects.filter(account=account).select_related("integration", "stock_location")
    if integration:
        queryset = queryset.filter(integration__identifier=integration)
    if status:
        queryset = queryset.filter(status=status)
    if kind:
        queryset = queryset.filter(kind=kind)
    if identifier:
        queryset = queryset.filter(identifier=identifier)
    if request_id:
        queryset = queryset.filter(request_id=request_id)
    return queryset.order_by("-created_at", "-id")
