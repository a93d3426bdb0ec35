"""API keys: the account's keys, a new one (shown once, on the page that answers its creation), revoke."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import selectors, services
from accounts.models import Account, Scope
from accounts.policy import Action
from backoffice.members import member_view
from core.errors import ServiceError


class KeyForm(forms.Form):
    """A new key: one of the account's integrations and at least one scope."""

    integration = forms.ChoiceField(label=gettext_lazy("Integration"))
    scopes = forms.MultipleChoiceField(
        label=gettext_lazy("Scopes"), choices=Scope.choices, widget=forms.CheckboxSelectMultiple
    )
    name = forms.CharField(label=gettext_lazy("Name (optional)"), max_length=200, required=False)

    def __init__(self, *args: Any, account: Account, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(i.identifier, i.name or i.identifier) for i in selectors.integrations(account=account)]
        self.fields["integration"].choices = choices  # type: ignore[attr-defined]


def _page(request: HttpRequest, form: KeyForm, *, raw_key: str = "", status: int = 200) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    context = {"keys": list(selectors.api_keys(account=account)), "form": form, "raw_key": raw_key}
    return render(request, "backoffice/keys/list.html", context, status=status)


@member_view(Action.MANAGE_API_KEYS, methods=("GET", "HEAD", "POST"))
def key_list(request: HttpRequest) -> HttpResponse:
    """GET: the keys and the form; POST: a new key, whose full value this one answer shows."""
    account = request.member.account  # type: ignore[attr-defined]
    if request.method != "POST":
        return _page(request, KeyForm(account=account))
    form = KeyForm(request.POST, account=account)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        api_key, raw_key = services.create_api_key(
            account=account,
            integration=form.cleaned_data["integration"],
            scopes=form.cleaned_data["scopes"],
            name=form.cleaned_data["name"],
        )
    except ServiceError as exc:
        form.add_error(None, exc.message)
        return _page(request, form, status=400)
    messages.success(request, _("The key %(prefix)s… is created.") % {"prefix": api_key.prefix})
    # The full key is in this answer only: never stored, never in a redirect, never cached.
    response = _page(request, KeyForm(account=account), raw_key=raw_key, status=201)
    add_never_cache_headers(response)
    return response


@member_view(Action.MANAGE_API_KEYS, methods=("POST",))
def key_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    api_key = get_object_or_404(selectors.api_keys(account=account), pk=pk)
    services.revoke_api_key(account=account, api_key=api_key)
    messages.success(request, _("The key %(prefix)s… is revoked.") % {"prefix": api_key.prefix})
    return HttpResponseRedirect(reverse("backoffice:keys"))
