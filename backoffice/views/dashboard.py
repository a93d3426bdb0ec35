"""The dashboard: what needs a look in the account today."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from backoffice import selectors
from backoffice.members import member_view


@member_view()
def dashboard(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    queues = selectors.queue_health(account=account)
    context = {
        "notices": selectors.notices(account=account),
        "queues": queues,
        "unhealthy": [q for q in queues if not q.healthy],
        "failures": selectors.export_failure_reasons(account=account),
        "integrations": selectors.integration_health(account=account),
        "sales": list(selectors.sales_with_warnings(account=account)),
    }
    return render(request, "backoffice/dashboard.html", context)
