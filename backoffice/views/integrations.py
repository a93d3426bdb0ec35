"""Runtime integrations, read only: each one's configuration in short (its secrets masked), its calls of the last
24 hours and its latest calls."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from backoffice import selectors
from backoffice.members import member_view
from backoffice.pages import newest_first
from integrations.selectors import integration_calls, runtime_integrations


@member_view()
def integration_list(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    health = {h.kind: h for h in selectors.integration_health(account=account)}
    rows = [(integration, health.get(integration.kind)) for integration in runtime_integrations(account=account)]
    return render(request, "backoffice/integrations/integrations.html", {"rows": rows})


@member_view()
def integration_detail(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    integration = runtime_integrations(account=account).filter(pk=pk).first()
    if integration is None:
        raise Http404("no such runtime integration")
    health = next((h for h in selectors.integration_health(account=account) if h.kind == integration.kind), None)
    calls = newest_first(integration_calls(account=account, kind=integration.kind), request)
    context = {"integration": integration, "health": health, "page": calls}
    return render(request, "backoffice/integrations/integration.html", context)
