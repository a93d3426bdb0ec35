"""Runtime integrations: each one's configuration in short (its secrets masked), its calls of the last 24 hours
and its latest calls; for owners and managers, a new one, a change (the form of ``integrations.forms``, saved
through ``integrations.services``, which audits it) and "Test this integration" (one call with sample values,
rate-limited as every try-out; a kind that may move money only after a confirmation)."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import tryouts
from accounts.policy import Action
from backoffice import selectors
from backoffice.documents import in_short
from backoffice.members import member_view
from backoffice.pages import newest_first
from core import jsonparse
from core.errors import ServiceError
from core.jsonenc import DecimalJSONEncoder
from integrations import services
from integrations.forms import AccountIntegrationForm
from integrations.kinds import KINDS, MOVES_MONEY
from integrations.models import RuntimeIntegration
from integrations.selectors import integration_calls, runtime_integrations

# Characters of a tested answer the page shows (its beginning).
ANSWER_SHOWN = 2000


def _integration(request: HttpRequest, pk: int) -> RuntimeIntegration:
    """The member's account's runtime integration, else 404 (another account's is not found, never refused)."""
    account = request.member.account  # type: ignore[attr-defined]
    return get_object_or_404(runtime_integrations(account=account), pk=pk)


@member_view()
def integration_list(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    health = {h.kind: h for h in selectors.integration_health(account=account)}
    rows = [(integration, health.get(integration.kind)) for integration in runtime_integrations(account=account)]
    return render(request, "backoffice/integrations/integrations.html", {"rows": rows})


@member_view()
def integration_detail(request: HttpRequest, pk: int) -> HttpResponse:
    integration = _integration(request, pk)
    account = integration.account
    health = next((h for h in selectors.integration_health(account=account) if h.kind == integration.kind), None)
    calls = newest_first(integration_calls(account=account, kind=integration.kind), request)
    context = {"integration": integration, "health": health, "page": calls}
    return render(request, "backoffice/integrations/integration.html", context)


def _form_page(
    request: HttpRequest, form: AccountIntegrationForm, integration: RuntimeIntegration | None, *, status: int = 200
) -> HttpResponse:
    placeholders = [(kind, ["{" + name + "}" for name in names]) for kind, names in KINDS.items()]
    context = {"form": form, "integration": integration, "placeholders": placeholders}
    return render(request, "backoffice/integrations/form.html", context, status=status)


def _service_errors(form: AccountIntegrationForm, exc: ServiceError) -> None:
    """The service's refusal on the fields it names (``headers.Authorization`` on ``headers``)."""
    for error in exc.errors() or [{"field": "", "message": exc.message}]:
        head = re.split(r"[.\[]", error.get("field") or "", maxsplit=1)[0]
        form.add_error(head if head in form.fields else None, error["message"])


def _save(request: HttpRequest, form: AccountIntegrationForm, stored: RuntimeIntegration | None) -> HttpResponse:
    """Save a valid form through the service (which audits the change); its refusal is the form's error."""
    account = request.member.account  # type: ignore[attr-defined]
    try:
        saved = services.save_runtime_integration(account=account, integration=stored, data=form.configuration())
    except ServiceError as exc:
        _service_errors(form, exc)
        return _form_page(request, form, stored, status=400)
    text = _("The %(kind)s integration is created.") if stored is None else _("The %(kind)s integration is saved.")
    messages.success(request, text % {"kind": saved.get_kind_display()})
    return HttpResponseRedirect(reverse("backoffice:integration", args=[saved.pk]))


@member_view(Action.MANAGE_INTEGRATIONS, methods=("GET", "HEAD", "POST"))
def integration_new(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    if request.method != "POST":
        return _form_page(request, AccountIntegrationForm(instance=RuntimeIntegration(account=account)), None)
    form = AccountIntegrationForm(request.POST, instance=RuntimeIntegration(account=account))
    if not form.is_valid():
        return _form_page(request, form, None, status=400)
    return _save(request, form, None)


@member_view(Action.MANAGE_INTEGRATIONS, methods=("GET", "HEAD", "POST"))
def integration_edit(request: HttpRequest, pk: int) -> HttpResponse:
    integration = _integration(request, pk)
    if request.method != "POST":
        return _form_page(request, AccountIntegrationForm(instance=integration), integration)
    # The form writes its values into its instance: the service gets the stored row, read again.
    form = AccountIntegrationForm(request.POST, instance=_integration(request, pk))
    if not form.is_valid():
        return _form_page(request, form, integration, status=400)
    return _save(request, form, integration)


class TestValuesForm(forms.Form):
    """The sample values of a test call: a JSON object of placeholder and value (the kind's defaults fill in the
    rest). ``confirm`` is the person's yes to a call that may move money."""

    values = forms.CharField(
        label=gettext_lazy("Sample values"),
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}),
        help_text=gettext_lazy("A JSON object of placeholder and value; the kind's defaults fill in the rest."),
    )
    confirm = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_values(self) -> dict[str, Any]:
        text = self.cleaned_data["values"].strip() or "{}"
        try:
            values = jsonparse.loads(text)
        except ServiceError:
            values = None
        if not isinstance(values, dict):
            raise forms.ValidationError(_("Must be a JSON object of placeholder and value."))
        return values


@member_view(Action.MANAGE_INTEGRATIONS, methods=("GET", "POST"))
def integration_test(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: call the integrator once with the kind's sample values, or, for a kind that may move money, say what
    a call would do and ask to confirm. POST: call it with the values typed (``confirm`` required for a kind
    that may move money)."""
    integration = _integration(request, pk)
    moves_money = integration.kind in MOVES_MONEY
    samples = json.dumps(services.SAMPLE_VALUES.get(integration.kind, {}), cls=DecimalJSONEncoder, indent=2)
    form = TestValuesForm(request.POST if request.method == "POST" else None, initial={"values": samples})
    context: dict[str, Any] = {"integration": integration, "form": form, "moves_money": moves_money}
    if request.method == "POST":
        if not form.is_valid():
            return render(request, "backoffice/integrations/test.html", context, status=400)
        values = form.cleaned_data["values"]
        confirmed = form.cleaned_data["confirm"] == "yes"
    else:
        values, confirmed = {}, False
    if moves_money and not confirmed:
        return render(request, "backoffice/integrations/test.html", context)
    try:
        tryouts.charge(account=integration.account, caller=f"user:{request.user.pk}")
    except tryouts.RateLimited as exc:
        context["refused"] = _(
            "Too many previews, test sends and test calls in this account: try again in %(seconds)d seconds."
        ) % {"seconds": exc.wait}
        response = render(request, "backoffice/integrations/test.html", context, status=429)
        response["Retry-After"] = str(exc.wait)
        return response
    try:
        result = services.test_runtime_integration(account=integration.account, integration=integration, values=values)
    except ServiceError as exc:
        problems = [{"field": exc.field or "", "message": exc.message}]
        result = {"ok": False, "status_code": None, "duration_ms": 0, "data": None, "problems": problems}
    answer = in_short(result["data"]) if result["data"] is not None else ""
    context.update(
        result=result,
        answer=answer[:ANSWER_SHOWN],
        answer_cut=len(answer) > ANSWER_SHOWN,
    )
    return render(request, "backoffice/integrations/test.html", context)
