"""Members: who works in the account with which role; add one (a new person is invited by e-mail), change a
role, remove one; the invitation's page, where a new member sets their password."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts import selectors, services
from accounts.models import Membership, Role
from accounts.policy import Action
from backoffice import invites
from backoffice.members import SESSION_KEY, member_view
from core.errors import Conflict, ServiceError


class AddMemberForm(forms.Form):
    email = forms.EmailField(label=gettext_lazy("E-mail"), max_length=254)
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=Role.choices, initial=Role.VIEWER)


def _membership(request: HttpRequest, pk: int) -> Membership:
    """A membership of the member's account, else 404 (another account's is not found, never refused)."""
    return get_object_or_404(selectors.members(account=request.member.account), pk=pk)  # type: ignore[attr-defined]


def _refused(request: HttpRequest, exc: ServiceError, membership: Membership) -> None:
    if isinstance(exc, Conflict) and exc.code == "last_owner":
        text = _("%(email)s is the account's last owner: make another member an owner first.")
        messages.error(request, text % {"email": membership.user.get_username()})
    else:
        messages.error(request, exc.message)


def _after(request: HttpRequest, membership: Membership, *, still_owner: bool) -> HttpResponse:
    """Back to the list; to the dashboard when the member acted on themselves and may no longer manage members."""
    if membership.user_id == request.user.pk and not still_owner:
        return HttpResponseRedirect(reverse("backoffice:dashboard"))
    return HttpResponseRedirect(reverse("backoffice:members"))


def _sent(request: HttpRequest, membership: Membership) -> None:
    account = request.member.account  # type: ignore[attr-defined]
    address = membership.user.get_username()
    if invites.send_invitation(request, account=account, membership=membership):
        messages.success(request, _("An e-mail is on its way to %(email)s.") % {"email": address})
    else:
        messages.error(request, _("The e-mail to %(email)s could not be sent: try again later.") % {"email": address})


@member_view(Action.MANAGE_MEMBERS, methods=("GET", "HEAD", "POST"))
def member_list(request: HttpRequest) -> HttpResponse:
    """GET: the members and the form to add one; POST: add one (a new person gets an invitation by e-mail)."""
    account = request.member.account  # type: ignore[attr-defined]
    form = AddMemberForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        address = form.cleaned_data["email"].strip().lower()
        if selectors.members(account=account).filter(user__username=address).exists():
            form.add_error("email", _("%(email)s is a member already: change their role below.") % {"email": address})
        else:
            try:
                membership, _new = services.add_member(account=account, email=address, role=form.cleaned_data["role"])
            except ServiceError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                messages.success(request, _("%(email)s is a member now.") % {"email": address})
                _sent(request, membership)
                return HttpResponseRedirect(reverse("backoffice:members"))
    context: dict[str, Any] = {
        "members": list(selectors.members(account=account)),
        "form": form,
        "roles": Role.choices,
    }
    return render(request, "backoffice/members/list.html", context, status=400 if form.errors else 200)


@member_view(Action.MANAGE_MEMBERS, methods=("POST",))
def member_role(request: HttpRequest, pk: int) -> HttpResponse:
    membership = _membership(request, pk)
    role = request.POST.get("role", "")
    try:
        services.change_member_role(account=membership.account, membership=membership, role=role)
    except ServiceError as exc:
        _refused(request, exc, membership)
        return HttpResponseRedirect(reverse("backoffice:members"))
    text = _("%(email)s is %(role)s now.")
    messages.success(request, text % {"email": membership.user.get_username(), "role": Role(role).label})
    return _after(request, membership, still_owner=role == Role.OWNER)


@member_view(Action.MANAGE_MEMBERS, methods=("POST",))
def member_remove(request: HttpRequest, pk: int) -> HttpResponse:
    membership = _membership(request, pk)
    try:
        services.remove_member(account=membership.account, membership=membership)
    except ServiceError as exc:
        _refused(request, exc, membership)
        return HttpResponseRedirect(reverse("backoffice:members"))
    messages.success(request, _("%(email)s is no longer a member.") % {"email": membership.user.get_username()})
    return _after(request, membership, still_owner=False)


@member_view(Action.MANAGE_MEMBERS, methods=("POST",))
def member_invite(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a member's e-mail again (a new invitation link while they have no password)."""
    _sent(request, _membership(request, pk))
    return HttpResponseRedirect(reverse("backoffice:members"))


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def invite(request: HttpRequest, token: str) -> HttpResponse:
    """An invitation link: while valid, the new member chooses a password and is signed in to the account."""
    membership = invites.invitation(token)
    if membership is None:
        return render(request, "backoffice/members/invite.html", {"expired": True}, status=410)
    form = SetPasswordForm(membership.user, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        services.set_invited_password(
            account=membership.account, membership=membership, password=form.cleaned_data["new_password1"]
        )
        login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
        request.session[SESSION_KEY] = membership.account.identifier
        messages.success(request, _("Welcome: your password is set."))
        return HttpResponseRedirect(reverse("backoffice:dashboard"))
    context = {"form": form, "membership": membership, "account": membership.account}
    return render(request, "backoffice/members/invite.html", context, status=400 if form.errors else 200)
