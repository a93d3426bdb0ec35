"""Stock reads (spec: Stock event). Every function takes the account first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict, Unpack

from django.db.models import QuerySet

from accounts.models import Account
from core.selectors import filter_given
from ledger.models import StockEvent, StockLevel


class ItemFilters(TypedDict, total=False):
    """Stock levels' and events' filters: the stock location by identifier, the product and the variant."""

    stock_location: str | None
    product_id: str | None
    variant_id: str | None


class EventFilters(ItemFilters, total=False):
    type: str | None
    sale_id: str | None


_BY_IDENTIFIER = {"stock_location": "stock_location__identifier"}


def stock_levels(*, account: Account, **filters: Unpack[ItemFilters]) -> QuerySet[StockLevel]:
    """Current stock of the account, by stock location (identifier), product and variant."""
    queryset = StockLevel.objects.filter(account=account).select_related("stock_location")
    queryset = filter_given(queryset, filters, lookups=_BY_IDENTIFIER)
    return queryset.order_by("stock_location__identifier", "product_id", "variant_id", "id")


def stock_events(*, account: Account, **filters: Unpack[EventFilters]) -> QuerySet[StockEvent]:
    """Stock events of the account, newest first."""
    queryset = StockEvent.objects.filter(account=account).select_related("stock_location")
    return filter_given(queryset, filters, lookups=_BY_IDENTIFIER).order_by("-id")


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
