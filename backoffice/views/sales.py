"""Sales and checkouts as the registers posted them: each one's warnings and its document."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.selectors import stock_locations
from backoffice.documents import in_short, problems
from backoffice.members import member_view
from backoffice.pages import newest_first
from ledger.selectors.checkouts import checkouts, sales

# The lists' filters, as the query string names them: ``shop`` is the stock location's identifier, ``warnings``
# is "1" for those with warnings only.
FILTERS = ("shop", "warnings")


def _filters(request: HttpRequest) -> dict[str, str]:
    chosen = {name: request.GET.get(name, "").strip() for name in FILTERS}
    chosen["warnings"] = "1" if chosen["warnings"] == "1" else ""
    return chosen


def _shops(request: HttpRequest) -> list[str]:
    account = request.member.account  # type: ignore[attr-defined]
    return list(stock_locations(account=account).values_list("identifier", flat=True))


def _list(request: HttpRequest, selector: Callable[..., QuerySet[Any]], *deferred: str, template: str) -> HttpResponse:
    """A page of the selector's rows as the filters choose them, without the ``deferred`` documents."""
    chosen = _filters(request)
    rows = selector(
        account=request.member.account,  # type: ignore[attr-defined]
        stock_location=chosen["shop"] or None,
        has_warnings=True if chosen["warnings"] else None,
    ).defer(*deferred)
    context = {"page": newest_first(rows, request), "chosen": chosen, "shops": _shops(request)}
    return render(request, template, context)


@member_view()
def sale_list(request: HttpRequest) -> HttpResponse:
    return _list(request, sales, "document", "checkout__document", template="backoffice/sales/sales.html")


@member_view()
def sale_detail(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    sale = get_object_or_404(sales(account=account).defer("checkout__document"), pk=pk)
    context = {"sale": sale, "warnings": problems(sale.warnings), "document": in_short(sale.document)}
    return render(request, "backoffice/sales/sale.html", context)


@member_view()
def checkout_list(request: HttpRequest) -> HttpResponse:
    return _list(request, checkouts, "document", template="backoffice/sales/checkouts.html")


@member_view()
def checkout_detail(request: HttpRequest, pk: int) -> HttpResponse:
    checkout = get_object_or_404(checkouts(account=request.member.account), pk=pk)  # type: ignore[attr-defined]
    context = {
        "checkout": checkout,
        "warnings": problems(checkout.warnings),
        "document": in_short(checkout.document),
    }
    return render(request, "backoffice/sales/checkout.html", context)
