"""Who is at the screen: the signed-in person's membership of the account they work in now.

Every back-office view is wrapped in ``member_view``: a person who is not signed in goes to the sign-in page; a
person with no membership sees a page that says so (403); a person whose session has not passed the second step
of the sign-in goes to type their code, and one who must enrol in two-factor sign-in (an account of theirs
requires it) goes to their security page, the only page they may use until they have (``backoffice.second_step``);
a role the policy does not allow for the view's action gets a 403. The account a person works in is kept in the
session (the account switcher sets it, and so does a link naming an account, ``in_account``: a GET of any page with
``?account=<identifier>`` of one of the person's accounts switches to it, then the page is asked for again without
the parameter; an account not theirs is dropped the same way, the session unchanged); a person in one account only
is always in it. Every form that changes something carries the account it was shown in (``FORM_ACCOUNT_FIELD``, put
there by the ``account_guard`` template tag): a POST whose form was shown in another account than the one the person
works in now (they switched in another tab since) is refused with a 409 before the view runs, nothing changed. Every
view reads through the account-scoped selectors with ``request.member.account``, so an object of another account is
a 404 wherever it is named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from accounts.models import Account, Role
from accounts.policy import Action, allows
from accounts.services import memberships_of
from backoffice import second_step

__all__ = (
    "ACCOUNT_PARAMETER",
    "FORM_ACCOUNT_FIELD",
    "SESSION_KEY",
    "Member",
    "current_member",
    "in_account",
    "member_view",
    "template_context",
)

# The session's key for the identifier of the account the person works in now.
SESSION_KEY = "backoffice_account"
# The query parameter of a link that names the account its page is of (``in_account``); no page reads a GET parameter
# of that name otherwise.
ACCOUNT_PARAMETER = "account"
# The field of a back-office form that names the account the form was shown in (``account_guard``); no form has a
# field of that name otherwise. A POST without it is taken as it is (a client that is not a browser form).
FORM_ACCOUNT_FIELD = "form_account"
# The methods a link naming an account switches on: a link is followed by a GET (a HEAD answers as the GET would).
_SWITCHING_METHODS = ("GET", "HEAD")


@dataclass(frozen=True)
class Member:
    """The signed-in person in their current account, with their role there and every account they may switch to."""

    user: Any
    account: Account
    role: str
    accounts: tuple[Account, ...]

    def allows(self, action: Action | str) -> bool:
        return allows(self.role, Action(action))

    @property
    def can(self) -> dict[str, bool]:
        """Each action by name, whether the role allows it (for templates: ``member.can.retry_exports``)."""
        return {action.value: allows(self.role, action) for action in Action}

    @property
    def role_label(self) -> str:
        return str(Role(self.role).label) if self.role in Role.values else self.role


def current_member(request: HttpRequest) -> Member | None:
    """The person's membership in the account the session names, else in their first account; None for a person
    who is a member of no account (or not signed in)."""
    user = request.user
    if not user.is_authenticated or not user.is_active:
        return None
    memberships = memberships_of(user)
    if not memberships:
        return None
    wanted = request.session.get(SESSION_KEY)
    chosen = next((m for m in memberships if m.account.identifier == wanted), memberships[0])
    return Member(user=user, account=chosen.account, role=chosen.role, accounts=tuple(m.account for m in memberships))


def in_account(path: str, account: Account) -> str:
    """The back-office page ``path`` (a path with no query) as a link that opens it in ``account``, whichever of
    their accounts the reader works in now (``member_view`` switches to it)."""
    return f"{path}?{urlencode({ACCOUNT_PARAMETER: account.identifier})}"


def _switched_by_link(request: HttpRequest, member: Member) -> HttpResponse:
    """A GET naming an account (``in_account``): the session switches to it when it is one of the person's; any
    other name (an account they are not a member of, or none at all) is ignored, the session unchanged, and answered
    alike, so whether another account exists is never told. Either way the same page again, without the parameter
    (the other parameters kept), so the address shown and any link built from the query do not carry it."""
    wanted = request.GET.get(ACCOUNT_PARAMETER, "")
    if any(account.identifier == wanted for account in member.accounts):
        request.session[SESSION_KEY] = wanted
    rest = request.GET.copy()
    rest.pop(ACCOUNT_PARAMETER, None)
    query = rest.urlencode()
    return HttpResponseRedirect(f"{request.path}?{query}" if query else request.path)


def _form_of_other_account(request: HttpRequest, member: Member) -> HttpResponse | None:
    """A POST of a form shown in another account than the one the person works in now: refused (409), the view not
    run. The page names the form's account only when it is one of the person's, so a made-up identifier tells
    nothing of which accounts exist. None for a POST without the field or of the current account."""
    if request.method != "POST" or FORM_ACCOUNT_FIELD not in request.POST:
        return None
    shown_in = request.POST.get(FORM_ACCOUNT_FIELD, "")
    if shown_in == member.account.identifier:
        return None
    form_account = next((account for account in member.accounts if account.identifier == shown_in), None)
    context = {"form_account": form_account, "current_account": member.account}
    return render(request, "backoffice/other_account.html", context, status=409)


def template_context(request: HttpRequest) -> dict[str, Any]:
    """A context processor: ``member`` on every page (None where no member is signed in, as on the sign-in page)."""
    return {"member": getattr(request, "member", None)}


def member_view(
    action: Action = Action.VIEW, *, methods: tuple[str, ...] = ("GET", "HEAD"), enrolling: bool = False
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Wrap a back-office view: signed in (both steps), a member of an account, and allowed ``action`` there by
    the role policy; only ``methods`` (others: 405). ``enrolling``: the view is where a person who must enrol in
    two-factor sign-in does so (they may use it, and no other). A GET naming an account (``in_account``) switches
    to it and asks for the page again (``_switched_by_link``): once signed in, so a link followed before signing in
    switches after. A POST of a form shown in another account is refused before the role is asked
    (``_form_of_other_account``): the role is the current account's, not the form's. Sets ``request.member``."""

    def wrap(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def inner(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path(), reverse("backoffice:login"))
            member = current_member(request)
            if member is None:
                return render(request, "backoffice/no_account.html", status=403)
            still = second_step.step(request, accounts=member.accounts)
            if still == second_step.VERIFY:
                return redirect_to_login(request.get_full_path(), reverse("backoffice:login-verify"))
            if still == second_step.ENROL and not enrolling:
                return HttpResponseRedirect(reverse("backoffice:security"))
            if request.method in _SWITCHING_METHODS and ACCOUNT_PARAMETER in request.GET:
                return _switched_by_link(request, member)
            request.member = member  # type: ignore[attr-defined]
            if request.method not in methods:
                return render(
                    request, "backoffice/refused.html", {"reason": _("This page does not take that.")}, status=405
                )
            if (refused := _form_of_other_account(request, member)) is not None:
                return refused
            if not member.allows(action):
                reason = _("Your role in this account (%(role)s) does not allow this.") % {"role": member.role}
                return render(request, "backoffice/refused.html", {"reason": reason}, status=403)
            return view(request, *args, **kwargs)

        return inner

    return wrap
