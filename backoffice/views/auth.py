"""Sign-in (the e-mail address is the user name), sign-out, a new password by e-mail and the account switcher."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, SetPasswordForm
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse, reverse_lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from accounts.audit import Actor, acting
from accounts.services import memberships_of, record_new_password
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
    next_page = "backoffice:login"  # a URL name: LogoutView resolves it


class NewPasswordRequestForm(PasswordResetForm):
    """Django's password reset form for members: the mail goes to the active person whose e-mail address (their
    user name) was typed, in any case, when they are a member of an account, whether or not they have a password
    yet (a member added without one sets theirs this way). Any other address gets the same answer and no mail."""

    email = forms.EmailField(
        label=_("E-mail"), max_length=254, widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"})
    )

    def get_users(self, email: str) -> Iterator[Any]:
        address = email.strip().lower()
        for user in get_user_model().objects.filter(username=address, is_active=True).exclude(email=""):
            if memberships_of(user):
                yield user


class NewPasswordRequestView(auth_views.PasswordResetView):
    template_name = "backoffice/password/request.html"
    email_template_name = "backoffice/password/email.txt"
    subject_template_name = "backoffice/password/subject.txt"
    form_class = NewPasswordRequestForm
    success_url = reverse_lazy("backoffice:password-reset-sent")


class NewPasswordSentView(auth_views.PasswordResetDoneView):
    template_name = "backoffice/password/sent.html"


class NewPasswordView(auth_views.PasswordResetConfirmView):
    """The mailed link's page: a new password, twice. Setting it is audited in each of the person's accounts (as
    done by the person), in the transaction that saves it."""

    template_name = "backoffice/password/new.html"
    success_url = reverse_lazy("backoffice:password-reset-done")

    def form_valid(self, form: SetPasswordForm[Any]) -> HttpResponse:
        with transaction.atomic(), acting(Actor.person(form.user)):
            response = super().form_valid(form)
            record_new_password(user=form.user)
        return response


class NewPasswordDoneView(auth_views.PasswordResetCompleteView):
    template_name = "backoffice/password/done.html"


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
