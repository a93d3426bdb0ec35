"""Sales and checkouts as the registers posted them: each one's warnings and its document."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

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


@member_view()
def sale_list(request: HttpRequest) -> HttpResponse:
    chosen = _filters(request)
    rows = sales(
        account=request.member.account,  # type: ignore[attr-defined]
        stock_location=chosen["shop"] or None,
        has_warnings=True if chosen["warnings"] else None,
    ).defer("document", "checkout__document")
    context = {"page": newest_first(rows, request), "chosen": chosen, "shops": _shops(request)}
    return render(request, "backoffice/sales/sales.html", context)


@member_view()
def sale_detail(request: HttpRequest, pk: int) -> HttpResponse:
    sale = (
        sales(account=request.member.account)  # type: ignore[attr-defined]
        .defer("checkout__document")
        .filter(pk=pk)
        .first()
    )
    if sale is None:
        raise Http404("no such sale")
    context = {"sale": sale, "warnings": problems(sale.warnings), "document": in_short(sale.document)}
    return render(request, "backoffice/sales/sale.html", context)


@member_view()
def checkout_list(request: HttpRequest) -> HttpResponse:
    chosen = _filters(request)
    rows = checkouts(
        account=request.member.account,  # type: ignore[attr-defined]
        stock_location=chosen["shop"] or None,
        has_warnings=True if chosen["warnings"] else None,
    ).defer("document")
    context = {"page": newest_first(rows, request), "chosen": chosen, "shops": _shops(request)}
    return render(request, "backoffice/sales/checkouts.html", context)


@member_view()
def checkout_detail(request: HttpRequest, pk: int) -> HttpResponse:
    checkout = checkouts(account=request.member.account).filter(pk=pk).first()  # type: ignore[attr-defined]
    if checkout is None:
        raise Http404("no such checkout")
    context = {
        "checkout": checkout,
        "warnings": problems(checkout.warnings),
        "document": in_short(checkout.document),
    }
    return render(request, "backoffice/sales/checkout.html", context)
