"""Sign-in (the e-mail address is the user name) and its second step (a code), sign-out, a new password by e-mail
and the account switcher."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_lockout_response
from django import forms
from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME, get_user_model, user_login_failed
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, SetPasswordForm
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from accounts import two_factor
from accounts.audit import Actor, acting
from accounts.services import language_of, memberships_of, record_new_password, set_language
from backoffice import second_step
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


class CodeForm(forms.Form):
    """A code of the person's authenticator app, or one of their recovery codes."""

    code = forms.CharField(
        label=_("Code"),
        max_length=32,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True, "spellcheck": "false"}),
    )

    def clean_code(self) -> str:
        return two_factor.normalised(str(self.cleaned_data.get("code", "")))


def _with_next(path: str, next_url: str) -> str:
    return f"{path}?{urlencode({REDIRECT_FIELD_NAME: next_url})}" if next_url else path


def _safe_next(request: HttpRequest) -> str:
    """The ``next`` of the request when it is a path of this site, else the dashboard."""
    wanted = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME) or ""
    if wanted and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return reverse("backoffice:dashboard")


class SignInView(auth_views.LoginView):
    """The password; a person with two-factor sign-in on is not signed in by it, but sent to type a code
    (``backoffice.second_step``)."""

    template_name = "backoffice/login.html"
    form_class = SignInForm
    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        return reverse("backoffice:dashboard")

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if not two_factor.is_enrolled(user=user):
            return _in_their_language(super().form_valid(form), user)
        second_step.begin(self.request, user=user)
        return HttpResponseRedirect(_with_next(reverse("backoffice:login-verify"), self.get_success_url()))


@never_cache
@csrf_protect
@require_http_methods(["GET", "HEAD", "POST"])
def sign_in_code(request: HttpRequest) -> HttpResponse:
    """The second step: a code from the app or a recovery code. A wrong one counts towards the sign-in's lock-out
    (django-axes, with the wrong passwords: one count per e-mail address and client address) and slows its device
    down (django-otp's throttling)."""
    next_url = _safe_next(request)
    user = request.user if request.user.is_authenticated else second_step.pending_user(request)
    if user is None:
        return HttpResponseRedirect(_with_next(reverse("backoffice:login"), next_url))
    if not two_factor.is_enrolled(user=user) or (request.user.is_authenticated and second_step.is_verified(request)):
        # Nothing left to check: the device was turned off meanwhile, or this session passed the step already.
        second_step.finish(request, user=user, device=None)
        return HttpResponseRedirect(next_url)
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        credentials = {"username": user.get_username()}
        if AxesProxyHandler.is_locked(request, credentials):
            return get_lockout_response(request, None, credentials)  # the page of AXES_LOCKOUT_CALLABLE
        if form.is_valid():
            code = form.cleaned_data["code"]
            wait = two_factor.wait_seconds(user=user, code=code)
            device = None if wait else two_factor.check_code(user=user, code=code)
            if device is not None:
                second_step.finish(request, user=user, device=device)
                return _in_their_language(HttpResponseRedirect(next_url), user)
            if wait:
                text = gettext("Too many wrong codes: try again in %(seconds)s seconds.") % {"seconds": wait}
                form.add_error("code", text)
            else:
                # Counted as a failed sign-in (AxesMiddleware answers with the lock-out page once it locks).
                user_login_failed.send(sender=__name__, credentials=credentials, request=request)
                form.add_error("code", gettext("That code is not right."))
    context = {"form": form, "next": next_url, "person": user.get_username()}
    return render(request, "backoffice/login_verify.html", context, status=400 if form.errors else 200)


def _remember_language(response: HttpResponse, language: str) -> HttpResponse:
    """The language cookie LocaleMiddleware reads, set as Django's ``set_language`` sets it ("" removes it)."""
    if not language:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, path=settings.LANGUAGE_COOKIE_PATH)
        return response
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response


def _in_their_language(response: HttpResponse, user: Any) -> HttpResponse:
    """After signing in: the pages in the language the person chose, on any browser (none chosen: unchanged)."""
    language = language_of(user=user)
    return _remember_language(response, language) if language else response


@csrf_protect
@require_POST
def choose_language(request: HttpRequest) -> HttpResponse:
    """The language chooser of every page, the sign-in page's too: kept in the cookie Django's ``LocaleMiddleware``
    reads and, for a signed-in person, in their preferences (``accounts.services.set_language``), so it follows
    them to any browser they sign in on. "" goes back to the browser's language."""
    language = str(request.POST.get("language", ""))
    if language and language not in dict(settings.LANGUAGES):
        reason = gettext("That language is not one of the back-office's.")
        return render(request, "backoffice/refused.html", {"reason": reason}, status=400)
    if request.user.is_authenticated:
        set_language(user=request.user, language=language)
    return _remember_language(HttpResponseRedirect(_safe_next(request)), language)


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
