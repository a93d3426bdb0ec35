"""Register close statements as the registers closed them: each one's summaries, reconciliations and document."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.selectors import registers
from backoffice.documents import amount, in_short, number, statement_reconciliations, statement_summaries
from backoffice.members import member_view
from backoffice.pages import newest_first
from ledger.selectors.registers import register_close_statements, statements_in_short

# The list's filter, as the query string names it: the register's identifier.
FILTERS = ("register",)


@member_view()
def statement_list(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    chosen = {name: request.GET.get(name, "").strip() for name in FILTERS}
    page = newest_first(statements_in_short(account=account, register=chosen["register"] or None), request)
    for row in page.rows:  # the document's values as the page shows them
        row.total_shown = amount(row.total, row.base_currency_code)
        row.sale_count_shown = number(row.sale_count)
    context = {
        "page": page,
        "chosen": chosen,
        "registers": list(registers(account=account).order_by("identifier").values_list("identifier", flat=True)),
    }
    return render(request, "backoffice/statements/statements.html", context)


@member_view()
def statement_detail(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    statement = get_object_or_404(register_close_statements(account=account).select_related("period"), pk=pk)
    document = statement.document if isinstance(statement.document, dict) else {}
    summary = document.get("register_summary")
    opened_with = summary.get("cash_total_at_open") if isinstance(summary, dict) else None
    context = {
        "statement": statement,
        "facts": document,
        "cash_at_open": amount(opened_with, document.get("base_currency_code")),
        "summaries": statement_summaries(document),
        "reconciliations": statement_reconciliations(document),
        "document": in_short(statement.document),
    }
    return render(request, "backoffice/statements/statement.html", context)
