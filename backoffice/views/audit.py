"""The audit log: every change in the account, newest first, by object and by actor, each field from what to
what."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import AuditEntry
from accounts.policy import Action
from accounts.selectors import audit_entries
from backoffice.members import member_view
from backoffice.pages import newest_first

# The filters, as the query string names them (accounts.selectors.audit_entries's parameters).
FILTERS = ("target_type", "target_id", "actor")

# The actions the services record, as the page names them (another shows as recorded).
ACTIONS = {
    "created": gettext_lazy("created"),
    "changed": gettext_lazy("changed"),
    "deleted": gettext_lazy("deleted"),
    "revoked": gettext_lazy("revoked"),
}


@dataclass(frozen=True)
class Change:
    field: str
    was: str
    now: str


@dataclass(frozen=True)
class Row:
    entry: AuditEntry
    action: str
    changes: list[Change]


def _shown(value: Any) -> str:
    """A value as the entry keeps it (secrets already masked), as text."""
    if value is None:
        return "\N{EN DASH}"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "[]"
    return str(value)


def _changes(entry: AuditEntry) -> list[Change]:
    found = entry.changes if isinstance(entry.changes, dict) else {}
    return [
        Change(field=str(field), was=_shown(pair[0]), now=_shown(pair[1]))
        for field, pair in found.items()
        if isinstance(pair, list | tuple) and len(pair) == 2
    ]


@member_view(Action.VIEW_AUDIT_LOG)
def audit_log(request: HttpRequest) -> HttpResponse:
    account = request.member.account  # type: ignore[attr-defined]
    chosen = {name: request.GET.get(name, "").strip()[:200] for name in FILTERS}
    page = newest_first(audit_entries(account=account, **chosen), request)
    context = {
        "page": page,
        "rows": [
            Row(entry=entry, action=str(ACTIONS.get(entry.action, entry.action)), changes=_changes(entry))
            for entry in page.rows
        ],
        "chosen": chosen,
    }
    return render(request, "backoffice/audit/log.html", context)
