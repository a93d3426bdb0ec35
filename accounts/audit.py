"""The audit trail: every change a person, an API key or the system makes in an account.

A service that changes something calls ``record`` in the same transaction, with the object's fields before and
after; the entry keeps the fields that differ, from what to what, with secrets masked (a changed secret shows as
changed, never its value). Who acted comes from the request being served (``AuditMiddleware`` keeps it for the
thread: the API key a DRF view authenticated, or the signed-in person), and is "system" outside a request (a Celery
task, a management command) unless ``acting`` says otherwise. Entries are never changed or deleted by any path;
they go with their account. ``KINDS`` lists what is recorded: each target type with its actions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse

from accounts.models import Account, ActorKind, ApiKey, AuditEntry

__all__ = (
    "KINDS",
    "MASK",
    "SYSTEM",
    "Actor",
    "AuditMiddleware",
    "Kind",
    "acting",
    "change_action",
    "current_actor",
    "diff",
    "record",
)

# What a secret's value is written as.
MASK = "••••••"
# Field names whose values are secrets wherever they appear (a queue's delivery, an integration's headers).
_SECRET = re.compile(
    r"secret|password|passwd|passphrase|private[_-]?key|token|api[_-]?key|apikey|authorization|key_hash|credential",
    re.I,
)
# A changed value is cut to this many characters in the entry.
VALUE_LIMIT = 500
# A changed list keeps this many of its items.
LIST_LIMIT = 50


@dataclass(frozen=True)
class Kind:
    """One kind of object the trail records: its ``target_type`` code, the actions recorded for it, what
    ``target_id`` holds, and where the change is made (the services that record it)."""

    target_type: str
    actions: tuple[str, ...]
    target_id: str
    recorded_by: str


_CRUD = ("created", "changed", "deleted")
_SWITCHED = (*_CRUD, "enabled", "disabled")

# Every target type and its actions, in one place: docs/api.md lists them (tests/accounts/test_audit_kinds.py
# checks that it does).
KINDS: dict[str, Kind] = {
    kind.target_type: kind
    for kind in (
        Kind("market", _CRUD, "its identifier", "accounts.services"),
        Kind("stock_location", _CRUD, "its identifier", "accounts.services"),
        Kind("register", _CRUD, "its identifier", "accounts.services"),
        Kind("cashier", _CRUD, "its identifier", "accounts.services"),
        Kind("integration", _CRUD, "its identifier", "accounts.services"),
        Kind("api_key", ("created", "revoked"), "its id", "accounts.services"),
        Kind("member", _CRUD, "the person's e-mail address", "accounts.services"),
        Kind("account", ("changed",), "its identifier", "accounts.two_factor"),
        Kind(
            "two_factor",
            ("enabled", "disabled", "codes_renewed", "recovery_code_used"),
            "the person's e-mail address",
            "accounts.two_factor",
        ),
        Kind("export_queue", _SWITCHED, "its id", "exports.services, exports.circuit"),
        Kind(
            "export_items",
            ("retried", "replayed"),
            "the id of the items' queue (several: comma-separated)",
            "exports.services, exports.replay",
        ),
        Kind("runtime_integration", _SWITCHED, "its id", "integrations.services"),
        Kind("product", _CRUD, "its id (the spec's)", "ledger.services.catalog"),
        Kind("expense", _CRUD, "its id (the spec's)", "ledger.services.catalog"),
    )
}


@dataclass(frozen=True)
class Actor:
    kind: str
    label: str
    user_id: int | None = None
    api_key_id: int | None = None

    @classmethod
    def person(cls, user: Any) -> Actor:
        return cls(ActorKind.PERSON, str(user.get_username())[:200], user_id=user.pk)

    @classmethod
    def api_key(cls, key: ApiKey) -> Actor:
        return cls(ActorKind.API_KEY, f"key {key.prefix}… ({key.integration.identifier})"[:200], api_key_id=key.pk)


SYSTEM = Actor(ActorKind.SYSTEM, "system")

_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)
_actor: ContextVar[Actor | None] = ContextVar("audit_actor", default=None)


@contextmanager
def acting(actor: Actor) -> Iterator[None]:
    """Record what happens inside as done by ``actor`` (a management command run for a person, a test)."""
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


def current_actor() -> Actor:
    """Who is acting now: ``acting``'s actor, else the request's API key or signed-in person, else the system."""
    actor = _actor.get()
    if actor is not None:
        return actor
    request = _request.get()
    user = getattr(request, "user", None) if request is not None else None
    key = getattr(user, "api_key", None)
    if isinstance(key, ApiKey):
        return Actor.api_key(key)
    if user is not None and getattr(user, "is_authenticated", False) and hasattr(user, "get_username"):
        return Actor.person(user)
    return SYSTEM


class AuditMiddleware:
    """Keeps the request being served for ``current_actor`` (read only when a change is recorded: the user is not
    loaded for requests that change nothing). After Django's authentication middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


def _flatten(value: Any, path: str = "") -> dict[str, Any]:
    """Nested objects as dotted paths (``delivery.headers.Authorization``); lists stay values."""
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, inner in value.items():
            flat.update(_flatten(inner, f"{path}.{key}" if path else str(key)))
        return flat
    return {path: value}


def _shown(path: str, value: Any) -> Any:
    if value is None:
        return None
    if _SECRET.search(path):
        return MASK
    if isinstance(value, str):
        return value[:VALUE_LIMIT]
    if isinstance(value, bool | int):
        return value
    if isinstance(value, list | tuple):
        return [_shown(path, item) for item in value[:LIST_LIMIT]]
    if isinstance(value, Mapping):  # an object in a list (a tax of a list of taxes): its fields shown alike
        return {str(key): _shown(f"{path}.{key}", inner) for key, inner in value.items()}
    return str(value)[:VALUE_LIMIT]  # decimals (exact), dates, anything else as text


Shown = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]


def diff(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, *, shown: Shown | None = None
) -> dict[str, list[Any]]:
    """The fields that differ, ``{path: [from, to]}``, secrets masked (a created object: every field from None; a
    deleted one: every field to None).

    ``shown``: the object before and after as it may be read, masked by its owner (the secrets no name tells: a
    web hook's custom headers, an integration's declared places). Fields are compared on their real values and
    written from these, so a changed secret shows as changed, masked; a path the view lacks (masked as a whole)
    is written as ``MASK``."""
    old, new = _flatten(before or {}), _flatten(after or {})
    old_view, new_view = (old, new) if shown is None else (_flatten(shown[0] or {}), _flatten(shown[1] or {}))
    changes: dict[str, list[Any]] = {}
    for path in sorted(set(old) | set(new)):
        was, now = old.get(path), new.get(path)
        if was != now:
            changes[path] = [_viewed(path, was, old_view), _viewed(path, now, new_view)]
    return changes


def _viewed(path: str, value: Any, view: Mapping[str, Any]) -> Any:
    if value is None:
        return None
    return _shown(path, view.get(path, MASK))


def change_action(changes: Mapping[str, list[Any]], *, switch: str = "enabled", along: Iterable[str] = ()) -> str:
    """What an update is called in the trail: ``enabled`` or ``disabled`` when it turns ``switch`` on or off and
    changes nothing else but ``along`` (the switch's own bookkeeping, a disable's reason), else ``changed``."""
    if switch not in changes or not set(changes) <= {switch, *along}:
        return "changed"
    return "enabled" if changes[switch][1] else "disabled"


def record(
    *,
    account: Account,
    action: str,
    target_type: str,
    target_id: Any,
    target: str = "",
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    shown: Shown | None = None,
    changes: Mapping[str, list[Any]] | None = None,
    actor: Actor | None = None,
) -> AuditEntry | None:
    """Record a change (in the caller's transaction). ``changes`` as given, or the ``diff`` of ``before`` and
    ``after`` (written from ``shown`` when given); an update that changed nothing records nothing (None).
    ``target_type`` and ``action`` are among ``KINDS``."""
    found = dict(changes) if changes is not None else diff(before, after, shown=shown)
    if action == "changed" and not found:
        return None
    who = actor or current_actor()
    return AuditEntry.objects.create(
        account=account,
        actor_kind=who.kind,
        actor_user_id=who.user_id,
        actor_api_key_id=who.api_key_id,
        actor=who.label,
        action=action[:32],
        target_type=target_type[:64],
        target_id=str(target_id)[:100],
        target=str(target)[:200],
        changes=found,
    )
