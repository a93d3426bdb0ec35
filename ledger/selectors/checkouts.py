"""Reads of checkouts and sales (spec: Checkout, Sale). Every function takes the account first."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict, Unpack

from django.db.models import Prefetch, QuerySet

from accounts.models import Account
from core.selectors import filter_given
from ledger.models import Checkout, Sale, SaleKind


class Within(TypedDict, total=False):
    """The filters checkouts and sales share: register and stock location by identifier, the identifier,
    voided or not, and the timestamp's window (``since`` included, ``until`` not)."""

    register: str | None
    stock_location: str | None
    identifier: str | None
    voided: bool | None
    since: datetime | None
    until: datetime | None


def _within(queryset: QuerySet, **within: Unpack[Within]) -> QuerySet:
    queryset = filter_given(
        queryset,
        {key: within.get(key) for key in ("register", "stock_location", "identifier")},
        lookups={"register": "register__identifier", "stock_location": "stock_location__identifier"},
    )
    if (voided := within.get("voided")) is not None:
        queryset = queryset.filter(voided=voided)
    if (since := within.get("since")) is not None:
        queryset = queryset.filter(timestamp__gte=since)
    if (until := within.get("until")) is not None:
        queryset = queryset.filter(timestamp__lt=until)
    return queryset.order_by("-timestamp", "-id")


def checkouts(*, account: Account, has_warnings: bool | None = None, **within: Unpack[Within]) -> QuerySet[Checkout]:
    """Checkouts of the account, newest first (by their timestamp), each with its sales in order."""
    sales = Prefetch("sales", queryset=Sale.objects.defer("document").order_by("id"))
    queryset = (
        Checkout.objects.filter(account=account)
        .select_related("register", "stock_location", "period")
        .prefetch_related(sales)
    )
    if has_warnings is not None:
        queryset = queryset.exclude(warnings=[]) if has_warnings else queryset.filter(warnings=[])
    return _within(queryset, **within)


def sales(
    *,
    account: Account,
    checkout_identifier: str | None = None,
    kind: str | None = None,
    is_return: bool | None = None,
    has_warnings: bool | None = None,
    **within: Unpack[Within],
) -> QuerySet[Sale]:
    """Sales, returns and expenses of the account, newest first (by their timestamp)."""
    queryset = Sale.objects.filter(account=account).select_related("checkout", "register", "stock_location")
    if checkout_identifier:
        queryset = queryset.filter(checkout__identifier=checkout_identifier)
    if kind:
        queryset = queryset.filter(kind=kind)
    if is_return is not None:
        queryset = queryset.filter(kind=SaleKind.RETURN) if is_return else queryset.exclude(kind=SaleKind.RETURN)
    if has_warnings is not None:
        queryset = queryset.exclude(warnings=[]) if has_warnings else queryset.filter(warnings=[])
    return _within(queryset, **within)
