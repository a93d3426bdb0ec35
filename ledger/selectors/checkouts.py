"""Reads of checkouts and sales (spec: Checkout, Sale). Every function takes the account first."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Prefetch, QuerySet

from accounts.models import Account
from ledger.models import Checkout, Sale, SaleKind


def _within(
    queryset: QuerySet,
    *,
    register: str | None,
    stock_location: str | None,
    identifier: str | None,
    voided: bool | None,
    since: datetime | None,
    until: datetime | None,
) -> QuerySet:
    if register:
        queryset = queryset.filter(register__identifier=register)
    if stock_location:
        queryset = queryset.filter(stock_location__identifier=stock_location)
    if identifier:
        queryset = queryset.filter(identifier=identifier)
    if voided is not None:
        queryset = queryset.filter(voided=voided)
    if since is not None:
        queryset = queryset.filter(timestamp__gte=since)
    if until is not None:
        queryset = queryset.filter(timestamp__lt=until)
    return queryset.order_by("-timestamp", "-id")


def checkouts(
    *,
    account: Account,
    register: str | None = None,
    stock_location: str | None = None,
    identifier: str | None = None,
    voided: bool | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Checkout]:
    """Checkouts of the account, newest first (by their timestamp), each with its sales in order."""
    sales = Prefetch("sales", queryset=Sale.objects.defer("document").order_by("id"))
    queryset = (
        Checkout.objects.filter(account=account)
        .select_related("register", "stock_location", "period")
        .prefetch_related(sales)
    )
    return _within(
        queryset,
        register=register,
        stock_location=stock_location,
        identifier=identifier,
        voided=voided,
        since=since,
        until=until,
    )


def sales(
    *,
    account: Account,
    register: str | None = None,
    stock_location: str | None = None,
    identifier: str | None = None,
    checkout_identifier: str | None = None,
    kind: str | None = None,
    is_return: bool | None = None,
    has_warnings: bool | None = None,
    voided: bool | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
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
    return _within(
        queryset,
        register=register,
        stock_location=stock_location,
        identifier=identifier,
        voided=voided,
        since=since,
        until=until,
    )
