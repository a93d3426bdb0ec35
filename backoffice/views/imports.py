"""The import log: every item the account's integrations posted, its outcome, and each one's errors and payload."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.selectors import integrations
from backoffice.documents import in_short, problems
from backoffice.members import member_view
from backoffice.pages import newest_first
from imports.models import ImportKind, ImportStatus
from imports.selectors import import_items

# The import log's filters, as the query string names them.
FILTERS = ("integration", "status", "kind", "identifier")


@member_view()
def import_log(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    chosen = {name: request.GET.get(name, "").strip() for name in FILTERS}
    items = import_items(
        account=account,
        integration=chosen["integration"] or None,
        status=chosen["status"] if chosen["status"] in ImportStatus.values else None,
        kind=chosen["kind"] if chosen["kind"] in ImportKind.values else None,
        identifier=chosen["identifier"] or None,
    ).defer("payload", "errors", "markets")
    context = {
        "page": newest_first(items, request),
        "chosen": chosen,
        "integrations": list(integrations(account=account).values_list("identifier", flat=True)),
        "statuses": ImportStatus.choices,
        "kinds": ImportKind.choices,
    }
    return render(request, "backoffice/imports/log.html", context)


@member_view()
def import_item(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    item = get_object_or_404(import_items(account=account), pk=pk)
    context = {"item": item, "errors": problems(item.errors), "payload": in_short(item.payload)}
    return render(request, "backoffice/imports/item.html", context)
