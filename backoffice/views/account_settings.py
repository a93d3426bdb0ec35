"""The account's settings (owners only): whether every member must sign in with two factors."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import two_factor
from accounts.policy import Action
from backoffice.members import member_view


class AccountSettingsForm(forms.Form):
    two_factor_required = forms.BooleanField(
        label=gettext_lazy("Every member signs in with two factors"),
        required=False,
        help_text=gettext_lazy(
            "A member without an authenticator app is asked to set one up right after their password, and can do "
            "nothing else until they have."
        ),
    )


@member_view(Action.MANAGE_ACCOUNT, methods=("GET", "HEAD", "POST"))
def account_settings(request: HttpRequest) -> HttpResponse:
    """GET: the settings; POST: change them (audited)."""
    account = request.member.account  # type: ignore[attr-defined]
    initial = {"two_factor_required": account.two_factor_required}
    form = AccountSettingsForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        two_factor.set_two_factor_required(account=account, required=form.cleaned_data["two_factor_required"])
        messages.success(request, _("The settings are saved."))
        return HttpResponseRedirect(reverse("backoffice:settings"))
    return render(request, "backoffice/settings.html", {"form": form}, status=400 if form.errors else 200)
