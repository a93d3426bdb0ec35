"""Failed authentications, limited per client address and per key prefix.

Every API-key-authenticated surface (``/imports/``, ``/api/v1/``, ``/api/v1/pos/``) and the ``/metrics`` bearer
token count their failures here, against two *subjects*: the client's address and, for a well-formed key, its
prefix. After ``AUTH_FAILURE_LIMIT`` failures of one subject within ``AUTH_FAILURE_WINDOW_SECONDS`` of its first
failure, that subject is locked until the window ends, and what a lock refuses depends on the subject:

- an address: every request from it answers 429 with ``Retry-After``, a request with the right key included, so
  brute force from one address is throttled and a locked caller never learns whether a guess was right;
- a key prefix: every *failed* request with that prefix answers 429, from any address, but the right key is
  never refused for it. A prefix is public (the admin shows it, logs carry it): if its lock refused the right key,
  anyone who knows it could lock the key's owner out by spreading failures over many addresses. Guessing a key of
  256 random bits from many addresses is no attack the lock has to stop; the prefix's count shows that one is
  being tried (a warning is logged when it reaches the limit).

An IPv6 client counts as its /64 (one customer's network).

The counts live in the database (``AuthFailureWindow``), shared by every process and machine on the embedded
default (SQLite) and on PostgreSQL alike, and counted up by a single UPDATE, so concurrent failures are never
lost. A successful API key authentication costs no extra query: the lock check is a NOT EXISTS clause of the
key lookup (``unlocked``, used by ``selectors.api_key_for_credentials``). Only failures write.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, F, QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import exceptions, status
from rest_framework.request import Request

from accounts import keys
from accounts.models import AuthFailureWindow

logger = logging.getLogger(__name__)

TOO_MANY_FAILURES = "Too many failed authentications: try again after the delay in the Retry-After header."
# Subjects are stored; an address that is not one (a broken proxy header) is cut to this length.
_MAX_ADDRESS_LENGTH = 64
_ADDRESS = "address:"


class TooManyAuthenticationFailures(exceptions.APIException):
    """429 with ``Retry-After`` (DRF's exception handler sets the header from ``wait``)."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = TOO_MANY_FAILURES
    default_code = "too_many_authentication_failures"

    def __init__(self, wait: int) -> None:
        super().__init__()
        self.wait = wait


def client_address(request: HttpRequest | Request) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``TRUSTED_PROXY_COUNT`` proxies that each append the
    address they saw to ``X-Forwarded-For``, the entry the outermost of them wrote (that many from the right).
    Entries further left were written by the client and prove nothing. Also django-axes' address."""
    remote: str = request.META.get("REMOTE_ADDR") or ""
    hops: int = settings.TRUSTED_PROXY_COUNT
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR") or ""
    if hops > 0 and forwarded:
        entries = [entry.strip() for entry in forwarded.split(",") if entry.strip()]
        if entries:
            candidate = entries[-min(hops, len(entries))]
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                pass  # not written by a proxy: keep the peer's address
    return remote


def _address_subject(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"{_ADDRESS}{address[:_MAX_ADDRESS_LENGTH]}"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"{_ADDRESS}{ip.ipv4_mapped}"
        # One customer gets a /64 and may use any address in it.
        return f"{_ADDRESS}{ipaddress.IPv6Network((ip, 64), strict=False)}"
    return f"{_ADDRESS}{ip}"


def subjects(request: HttpRequest | Request, *, raw_key: str | None = None) -> list[str]:
    """What a failure of this request counts against: the client's address and, when the presented key is
    well-formed, its prefix. Empty when the limit is off (``AUTH_FAILURE_LIMIT=0``)."""
    if settings.AUTH_FAILURE_LIMIT <= 0:
        return []
    found = [_address_subject(client_address(request))]
    prefix = keys.prefix_of(raw_key) if raw_key else None
    if prefix is not None:
        found.append(f"key:{prefix}")
    return found


def refusing_right_keys(subjects: Sequence[str]) -> list[str]:
    """The subjects whose lock refuses a request with the right key too: the client's address (see the module's
    docstring: a key prefix's lock only refuses failures)."""
    return [subject for subject in subjects if subject.startswith(_ADDRESS)]


def locked(subjects: Sequence[str], *, now: datetime) -> QuerySet[AuthFailureWindow]:
    """The windows that lock one of ``subjects`` out at ``now``."""
    return AuthFailureWindow.objects.filter(
        subject__in=list(subjects), failures__gte=settings.AUTH_FAILURE_LIMIT, window_ends_at__gt=now
    )


def unlocked(subjects: Sequence[str]) -> RawSQL:
    """A condition for the WHERE of another query (the key lookup): true while none of ``subjects`` is locked out.

    The rule of ``locked``, written as SQL: the ORM's ``~Exists(locked(...))`` costs more Python to build than
    the lookup itself, on every successful request; this costs a string (measured in docs/notes/exposure.md).
    """
    quote = connection.ops.quote_name
    placeholders = ", ".join(["%s"] * len(subjects))
    # The table's name comes from the model (its columns are its field names); every value is a parameter.
    sql = (
        f"NOT EXISTS (SELECT 1 FROM {quote(AuthFailureWindow._meta.db_table)} "  # noqa: S608
        f"WHERE {quote('subject')} IN ({placeholders}) AND {quote('failures')} >= %s "
        f"AND {quote('window_ends_at')} > %s)"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    return RawSQL(sql, [*subjects, settings.AUTH_FAILURE_LIMIT, now], output_field=BooleanField())  # noqa: S611


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(1, math.ceil((moment - now).total_seconds()))


def seconds_locked(subjects: Sequence[str]) -> int:
    """How long one of ``subjects`` stays locked out (seconds, rounded up), or 0. One query."""
    if not subjects:
        return 0
    now = timezone.now()
    ends = locked(subjects, now=now).order_by("-window_ends_at").values_list("window_ends_at", flat=True).first()
    return _seconds_until(ends, now) if ends else 0


def record_failure(subjects: Sequence[str]) -> int:
    """Counts a failed authentication against each subject and returns 0; or, when a subject is locked out
    already, counts nothing and returns the seconds to wait.

    The request's outcome is decided here: 0 means 401, anything else 429 with that ``Retry-After``. The failure
    that reaches the limit still answers 401; the next request answers 429.
    """
    if not subjects:
        return 0
    now = timezone.now()
    windows = {w.subject: w for w in AuthFailureWindow.objects.filter(subject__in=list(subjects))}
    limit: int = settings.AUTH_FAILURE_LIMIT
    open_windows = {s: w for s, w in windows.items() if w.window_ends_at > now}
    waits = [_seconds_until(w.window_ends_at, now) for w in open_windows.values() if w.failures >= limit]
    if waits:
        return max(waits)
    for subject in subjects:
        _count(subject, now=now)
        counted = open_windows[subject].failures + 1 if subject in open_windows else 1
        if counted == limit:
            logger.warning(
                "Failed authentications: %s reached %d in its window and is refused until it ends", subject, limit
            )
    return 0


def _count(subject: str, *, now: datetime) -> None:
    """One more failure in the subject's open window, or a new window with one failure. Atomic on SQLite and
    PostgreSQL: the increment is one UPDATE, and two processes opening the same window meet on the unique
    subject (the loser counts in the winner's window)."""
    window_ends_at = now + timedelta(seconds=settings.AUTH_FAILURE_WINDOW_SECONDS)
    for _ in range(3):
        if AuthFailureWindow.objects.filter(subject=subject, window_ends_at__gt=now).update(failures=F("failures") + 1):
            return
        # No open window: start one, dropping every window that is over (this subject's too), so the table only
        # ever holds the subjects that failed within the last window.
        AuthFailureWindow.objects.filter(window_ends_at__lte=now).delete()
        try:
            with transaction.atomic():
                AuthFailureWindow.objects.create(subject=subject, failures=1, window_ends_at=window_ends_at)
            return
        except IntegrityError:
            continue


# What a key-authenticated operation answers once its caller failed to authenticate too often (the locks above).
_LOCKED_OUT = (
    "Too many failed authentications: from this client address (every request is refused, the right key included) "
    "or with this key's prefix (its failures are), AUTH_FAILURE_LIMIT within AUTH_FAILURE_WINDOW_SECONDS. Try again "
    "after the delay in the Retry-After header."
)


def _locked_out_example() -> dict[str, Any]:
    return {"summary": "Too many failed authentications", "value": {"status": "ERROR", "message": TOO_MANY_FAILURES}}


def _retry_after() -> dict[str, Any]:
    return {"Retry-After": {"description": "Seconds until the caller may try again.", "schema": {"type": "integer"}}}


def authentication_limits(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every operation that authenticates a key (it documents a 401) can also
    answer 429 when its caller failed too often, so each documents that 429, with the error body, ``Retry-After``
    and its example; an operation that has a 429 of its own (a try-out's rate) names both causes. Each operation
    gets objects of its own, so the YAML has no anchors."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.get("responses") if isinstance(operation, dict) else None
            if not responses or "401" not in responses:
                continue
            own = responses.get("429")
            if own is not None:
                own["description"] = f"{own.get('description', '')} Or: {_LOCKED_OUT}".strip()
                own.setdefault("headers", _retry_after())
                examples = own.setdefault("content", {}).setdefault("application/json", {}).setdefault("examples", {})
                examples["TooManyFailedAuthentications"] = _locked_out_example()
                continue
            responses["429"] = {
                "description": _LOCKED_OUT,
                "headers": _retry_after(),
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"},
                        "examples": {"TooManyFailedAuthentications": _locked_out_example()},
                    }
                },
            }
    return result
