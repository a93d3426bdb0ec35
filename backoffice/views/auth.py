"""Sign-in (the e-mail address is the user name), sign-out and the account switcher."""

from __future__ import annotations

from django import forms
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from accounts.services import memberships_of
from backoffice.members import SESSION_KEY


class SignInForm(AuthenticationForm):
    """Django's sign-in form; the user name is the member's e-mail address, compared in lower case."""

    username = forms.CharField(
        label=_("E-mail"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"}),
    )

    def clean_username(self) -> str:
        return str(self.cleaned_data.get("username", "")).strip().lower()


class SignInView(auth_views.LoginView):
    template_name = "backoffice/login.html"
    form_class = SignInForm
    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        return reverse("backoffice:dashboard")


class SignOutView(auth_views.LogoutView):
    next_page = "backoffice:login"


@require_POST
def switch_account(request: HttpRequest) -> HttpResponse:
    """Work in another of the person's accounts (a POST from the switcher); an account they are not a member of
    is ignored: the session keeps naming only accounts of theirs."""
    if not request.user.is_authenticated:
        return HttpResponseRedirect(reverse("backoffice:login"))
    wanted = request.POST.get("account", "")
    if any(m.account.identifier == wanted for m in memberships_of(request.user)):
        request.session[SESSION_KEY] = wanted
    return HttpResponseRedirect(reverse("backoffice:dashboard"))
