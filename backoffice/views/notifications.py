"""Notifications: each member chooses what they are told by e-mail (``ops.notifications`` sends it): an export
queue disabled, a destination failing for a while, the daily digest. Every member sets their own, whatever their
role; nobody sets another's."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import selectors, services
from accounts.models import NotificationKind
from accounts.policy import Action
from backoffice.members import member_view

# What each kind means, as the page explains it.
HELP: dict[str, Any] = {
    NotificationKind.QUEUE_DISABLED: gettext_lazy(
        "An export queue of the account was turned off, by a person or by the system after days of failures."
    ),
    NotificationKind.BREAKER_OPEN: gettext_lazy(
        "A destination (an export queue's server, a runtime integration's) has been failing long enough that "
        "nothing is sent there for now. Once per failing period."
    ),
    NotificationKind.DAILY_DIGEST: gettext_lazy(
        "Every morning: yesterday's deliveries sent and failed per queue, failures by reason, import errors and "
        "runtime integration failures."
    ),
}
LABELS: dict[str, Any] = {
    NotificationKind.QUEUE_DISABLED: gettext_lazy("An export queue was disabled"),
    NotificationKind.BREAKER_OPEN: gettext_lazy("A destination has been failing for a while"),
    NotificationKind.DAILY_DIGEST: gettext_lazy("The daily digest"),
}


class NotificationsForm(forms.Form):
    """One checkbox per kind; a box left out is off."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for kind in NotificationKind.values:
            self.fields[kind] = forms.BooleanField(label=LABELS[kind], help_text=HELP[kind], required=False)


@member_view(Action.VIEW, methods=("GET", "HEAD", "POST"))
def notification_settings(request: HttpRequest) -> HttpResponse:
    """GET: the member's own choices; POST: save them (audited as a change of the member, by the member)."""
    account = request.member.account  # type: ignore[attr-defined]
    membership = selectors.membership(account_id=account.pk, user_id=request.member.user.pk)  # type: ignore[attr-defined]
    if membership is None:
        raise Http404("no membership")
    chosen = selectors.notifications_chosen(account=account, membership=membership)
    if request.method == "POST":
        form = NotificationsForm(request.POST)
        if form.is_valid():
            wanted = [kind for kind in NotificationKind.values if form.cleaned_data[kind]]
            services.set_notifications(account=account, membership=membership, chosen=wanted)
            messages.success(request, _("Your notifications are saved."))
            return HttpResponseRedirect(reverse("backoffice:notifications"))
    else:
        form = NotificationsForm(initial={kind: kind in chosen for kind in NotificationKind.values})
    context = {"form": form, "email": request.user.get_username()}
    return render(request, "backoffice/notifications.html", context, status=400 if form.errors else 200)
