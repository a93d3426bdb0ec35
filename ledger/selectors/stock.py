"""Stock reads (spec: Stock event). Every function takes the account first."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from accounts.models import Account
from ledger.models import StockEvent, StockLevel


def stock_levels(
    *,
    account: Account,
    stock_location: str | None = None,
    product_id: str | None = None,
    variant_id: str | None = None,
) -> QuerySet[StockLevel]:
    """Current stock of the account, by stock location (identifier), product and variant."""
    queryset = StockLevel.objects.filter(account=account).select_related("stock_location")
    if stock_location:
        queryset = queryset.filter(stock_location__identifier=stock_location)
    if product_id:
        queryset = queryset.filter(product_id=product_id)
    if variant_id:
        queryset = queryset.filter(variant_id=variant_id)
    return queryset.order_by("stock_location__identifier", "product_id", "variant_id", "id")


def stock_events(
    *,
    account: Account,
    stock_location: str | None = None,
    product_id: str | None = None,
    variant_id: str | None = None,
    type: str | None = None,
    sale_id: str | None = None,
) -> QuerySet[StockEvent]:
    """Stock events of the account, newest first."""
    queryset = StockEvent.objects.filter(account=account).select_related("stock_location")
    if stock_location:
        queryset = queryset.filter(stock_location__identifier=stock_location)
    if product_id:
        queryset = queryset.filter(product_id=product_id)
    if variant_id:
        queryset = queryset.filter(variant_id=variant_id)
    if type:
        queryset = queryset.filter(type=type)
    if sale_id:
        queryset = queryset.filter(sale_id=sale_id)
    return queryset.order_by("-id")


def levels_of(*, account: Account, keys: Sequence[tuple[int, str, str]]) -> list[StockLevel]:
    """The levels of these (stock location id, product id, variant id) items, in that order; missing ones
    are left out."""
    if not keys:
        return []
    rows = StockLevel.objects.filter(
        account=account,
        stock_location_id__in={k[0] for k in keys},
        product_id__in={k[1] for k in keys},
        variant_id__in={k[2] for k in keys},
    ).select_related("stock_location")
    found = {(r.stock_location_id, r.product_id, r.variant_id): r for r in rows}
    return [found[k] for k in keys if k in found]
