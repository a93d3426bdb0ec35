"""A circuit breaker per endpoint, shared by every process through the database.

An endpoint is one place a caller sends to, as one account uses it: a web hook's full URL, an FTP/SFTP server with
its user and directory, an e-mail relay with the recipients, a runtime integration's URL. Its key
(``endpoint_key``) is the account, the endpoint's origin and a short digest of the whole endpoint
(``"acct:7|https://erp.example.com:443|3f2a9c0b5d1e7f46"``): readable in the admin, bounded in length, and
one endpoint's failures (any answer, a timeout, an answer cut off) never pause another endpoint of the same host.
Failures to connect at all (refused, a connect timeout, no route or name, a TLS handshake broken off) happen
before any path is sent: they feed the breaker of the account's connections to that host (``host_key``), which
every endpoint there asks too (``ask``, ``report``), so a host that cannot be reached is found once, not once per
endpoint. Each breaker is:

* **closed**: calls go ahead. ``BREAKER_FAILURE_THRESHOLD`` failures in a row (timeouts, refused or dropped
  connections, 5xx: whatever the caller reports with ``record_failure``) open it; a success resets the count.
* **open** for a cool-down (``BREAKER_COOLDOWN_SECONDS``, doubled with each failed trial up to
  ``BREAKER_MAX_COOLDOWN_SECONDS``): ``allow`` answers "no" at once, with the time to ask again, and the caller
  makes no network call.
* **half-open** once the cool-down is over: exactly one caller, in any process, gets the trial call. It is claimed
  by one conditional ``UPDATE`` (only one statement can turn the row from open to half-open), so no lock is held
  during the call. Its outcome closes the breaker or opens it again for a longer cool-down. A trial whose process
  died is given again after ``BREAKER_TRIAL_SECONDS``.

State lives in ``core.models.CircuitBreaker`` rows: every gunicorn worker and Celery process on every machine sees
the same breaker (the embedded SQLite file or PostgreSQL; the Django cache is per process by default, so it is not
used). The hot path of a healthy destination costs no query: a process remembers a closed breaker it has read for
``BREAKER_MEMO_SECONDS`` (so an opening by another process is seen here up to that late, and a few more calls may
go out meanwhile), and a success on a breaker it knows to be clean writes nothing. The memo is a dict behind a
lock: gunicorn's threads share it safely.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from core.models import BreakerState, CircuitBreaker

__all__ = (
    "Decision",
    "Endpoint",
    "Ticket",
    "abandon",
    "allow",
    "ask",
    "clear_memo",
    "cooldown",
    "describe",
    "endpoint_key",
    "explain",
    "host_key",
    "look",
    "origin",
    "peek",
    "record_failure",
    "record_success",
    "release",
    "report",
    "reset",
    "state_of",
    "target",
)

# While another caller makes the trial call, the others ask again this often (the trial may end in milliseconds).
HALF_OPEN_POLL_SECONDS = 5.0


@dataclass(frozen=True)
class Decision:
    """``allowed``: make the call (``trial``: it is the one trial of a half-open breaker). When not allowed,
    ``retry_at`` is when asking again may be answered yes (the end of the cool-down, or a poll while a trial runs)."""

    allowed: bool
    trial: bool = False
    retry_at: datetime | None = None
    failures: int = 0


ALLOWED = Decision(allowed=True)

_memo: dict[str, tuple[float, bool]] = {}  # key -> (monotonic expiry, clean: closed with no failure counted)
_memo_lock = threading.Lock()


def _remember(key: str, *, clean: bool) -> None:
    seconds = float(settings.BREAKER_MEMO_SECONDS)
    if seconds <= 0:
        return
    with _memo_lock:
        _memo[key] = (time.monotonic() + seconds, clean)


def _memo_of(key: str) -> tuple[float, bool] | None:
    with _memo_lock:
        memo = _memo.get(key)
    if memo is None or memo[0] <= time.monotonic():
        return None
    return memo


def _forget(key: str) -> None:
    with _memo_lock:
        _memo.pop(key, None)


_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21, "sftp": 22, "smtp": 25}


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL (the port written out), lower case; "" for one that has no host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS.get(scheme, 0)}"


# The longest key ``CircuitBreaker.key`` holds; a longer origin is cut (the digest still tells endpoints apart).
MAX_KEY_LENGTH = 300
DIGEST_LENGTH = 16  # hex digits of SHA-256: 64 bits, no collision among the endpoints of one account and origin


def endpoint_key(*, account_id: int, endpoint: str, use: str = "") -> str | None:
    """The breaker key of an endpoint as one account uses it; None for one that has no host to key on.

    ``endpoint`` is a URL naming the whole endpoint (``https://erp.example.com/hooks/orders?shop=1``,
    ``sftp://exports@files.example.com:22/out``); the key keeps its origin in clear and a digest of all of it, so
    that a secret in a path or query never shows in the admin. Keyed per account on purpose: a platform many
    tenants post to (an iPaaS host) that fails for one tenant's endpoint must not pause the others. ``use`` keeps
    apart breakers of one endpoint that fail for different reasons (runtime integration calls, cut short by the
    POS budget, from exports)."""
    where = origin(endpoint)
    if not where:
        return None
    digest = hashlib.sha256(_canonical(endpoint).encode()).hexdigest()[:DIGEST_LENGTH]
    head = f"acct:{account_id}|{use}|" if use else f"acct:{account_id}|"
    room = MAX_KEY_LENGTH - len(head) - len(digest) - 1
    return f"{head}{where[:room]}|{digest}"


HOST_SUFFIX = "|host"


def host_key(*, account_id: int, endpoint: str, use: str = "") -> str | None:
    """The breaker of the connections to an endpoint's host (scheme, host and port) as one account makes them:
    fed only by failures to connect (``report`` with ``connecting``), so that a host that cannot be
    reached is found once for all the account's endpoints there, while one endpoint's answers (any status, a slow
    answer) never pause another."""
    where = origin(endpoint)
    if not where:
        return None
    head = f"acct:{account_id}|{use}|" if use else f"acct:{account_id}|"
    return f"{head}{where[: MAX_KEY_LENGTH - len(head) - len(HOST_SUFFIX)]}{HOST_SUFFIX}"


@dataclass(frozen=True)
class Endpoint:
    """The two breakers a call to one endpoint asks: its own (``key``) and its host's connections (``host``)."""

    key: str
    host: str


def target(*, account_id: int, endpoint: str, use: str = "") -> Endpoint | None:
    """The breakers of ``endpoint`` (a URL naming all of it, see ``endpoint_key``); None: no host to key on."""
    key = endpoint_key(account_id=account_id, endpoint=endpoint, use=use)
    host = host_key(account_id=account_id, endpoint=endpoint, use=use)
    return Endpoint(key, host) if key is not None and host is not None else None


@dataclass(frozen=True)
class Ticket:
    """``ask``'s answer: ``decision`` as ``allow`` gives it; ``host_refused``: the host's breaker refused (the
    connections failed, not this endpoint's answers); ``trials``: the keys whose trial call this caller holds."""

    decision: Decision
    host_refused: bool = False
    trials: tuple[str, ...] = ()


def ask(target: Endpoint) -> Ticket:
    """May a call to ``target`` be made now? Both its host's breaker and its own must let it through; a trial
    claimed on one is given back when the other refuses."""
    host = allow(target.host)
    if not host.allowed:
        return Ticket(host, host_refused=True)
    own = allow(target.key)
    if not own.allowed:
        if host.trial:
            release(target.host)
        return Ticket(own)
    trials = tuple(key for key, decision in ((target.host, host), (target.key, own)) if decision.trial)
    return Ticket(Decision(allowed=True, trial=bool(trials)), trials=trials)


def look(target: Endpoint) -> Ticket:
    """``peek`` for both breakers of ``target``: claims nothing."""
    host = peek(target.host)
    if not host.allowed:
        return Ticket(host, host_refused=True)
    return Ticket(peek(target.key))


def report(target: Endpoint, ticket: Ticket, *, failed: bool, connecting: bool = False, error: str = "") -> None:
    """The outcome of a call ``ask`` let through. ``failed``: the destination failed (not a refusal of this
    request); ``connecting``: no connection was made, a failure of the host (its breaker counts it; the
    endpoint's own gets no verdict). Any answer shows the host can be reached."""
    if not failed:
        record_success(target.host)
        record_success(target.key)
    elif connecting:
        record_failure(target.host, error=error)
        if target.key in ticket.trials:
            release(target.key)
    else:
        record_success(target.host)
        record_failure(target.key, error=error)


def abandon(ticket: Ticket) -> None:
    """The call ended without a verdict (a bug, a time limit): the trials it held go to the next caller."""
    for key in ticket.trials:
        release(key)


def _canonical(endpoint: str) -> str:
    """The endpoint with its origin written out (``HTTPS://Erp.example.com/x`` and ``https://erp.example.com:443/x``
    are one endpoint); userinfo other than the user name and a fragment do not make another endpoint."""
    parts = urlsplit(endpoint.strip())
    user = f"{parts.username}@" if parts.username else ""
    scheme, _, rest = origin(endpoint).partition("://")
    return f"{scheme}://{user}{rest}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")


def clear_memo() -> None:
    """Forget every remembered state (tests; a process that must see the database's state at once)."""
    with _memo_lock:
        _memo.clear()


def cooldown(trips: int) -> timedelta:
    """The cool-down after the ``trips``-th opening in a row: doubled each time, capped."""
    base = float(settings.BREAKER_COOLDOWN_SECONDS)
    seconds = min(base * 2 ** max(0, trips - 1), max(base, float(settings.BREAKER_MAX_COOLDOWN_SECONDS)))
    return timedelta(seconds=seconds)


def allow(key: str) -> Decision:
    """May a call to ``key`` be made now? Claims the trial call of a half-open breaker for the caller."""
    if _memo_of(key) is not None:
        return ALLOWED
    row = CircuitBreaker.objects.filter(key=key).values_list("state", "open_until", "failures").first()
    if row is None or row[0] == BreakerState.CLOSED:
        _remember(key, clean=row is None or row[2] == 0)
        return ALLOWED
    state, open_until, failures = row
    now = timezone.now()
    if state == BreakerState.OPEN and open_until is not None and open_until > now:
        return Decision(allowed=False, retry_at=open_until, failures=failures)
    # The cool-down is over (or a trial's process died): one conditional UPDATE gives the trial to one caller.
    claimable = Q(state=BreakerState.OPEN, open_until__lte=now) | Q(state=BreakerState.HALF_OPEN, trial_until__lte=now)
    claimed = CircuitBreaker.objects.filter(claimable, key=key).update(
        state=BreakerState.HALF_OPEN,
        trial_until=now + timedelta(seconds=float(settings.BREAKER_TRIAL_SECONDS)),
        updated_at=now,
    )
    if claimed:
        return Decision(allowed=True, trial=True, failures=failures)
    poll = min(HALF_OPEN_POLL_SECONDS, float(settings.BREAKER_TRIAL_SECONDS))
    return Decision(allowed=False, retry_at=now + timedelta(seconds=poll), failures=failures)


def peek(key: str) -> Decision:
    """Would ``allow`` refuse now? Claims nothing: for a caller about to do costly work before its call (rendering
    a large file) that ``allow`` then decides. ``allowed`` here only means "not known to be refused"."""
    if _memo_of(key) is not None:
        return ALLOWED
    row = CircuitBreaker.objects.filter(key=key).values_list("state", "open_until", "trial_until", "failures").first()
    if row is None or row[0] == BreakerState.CLOSED:
        return ALLOWED
    state, open_until, trial_until, failures = row
    now = timezone.now()
    if state == BreakerState.OPEN and open_until is not None and open_until > now:
        return Decision(allowed=False, retry_at=open_until, failures=failures)
    if state == BreakerState.HALF_OPEN and trial_until is not None and trial_until > now:
        poll = min(HALF_OPEN_POLL_SECONDS, float(settings.BREAKER_TRIAL_SECONDS))
        return Decision(allowed=False, retry_at=now + timedelta(seconds=poll), failures=failures)
    return ALLOWED


def record_success(key: str) -> None:
    """The destination answered: the breaker closes and its counts start again."""
    memo = _memo_of(key)
    if memo is not None and memo[1]:
        return  # closed with nothing counted, read a moment ago: nothing to write
    CircuitBreaker.objects.filter(key=key).exclude(state=BreakerState.CLOSED, failures=0).update(
        state=BreakerState.CLOSED,
        failures=0,
        trips=0,
        open_until=None,
        trial_until=None,
        failing_since=None,
        updated_at=timezone.now(),
    )
    _remember(key, clean=True)


def record_failure(key: str, *, error: str = "") -> CircuitBreaker:
    """The destination failed (timeout, refused or dropped connection, 5xx): count it; at the threshold, or when
    the trial call fails, the breaker opens. Returns the breaker as it now is."""
    _forget(key)
    now = timezone.now()
    with transaction.atomic():
        CircuitBreaker.objects.bulk_create([CircuitBreaker(key=key)], ignore_conflicts=True)
        row = CircuitBreaker.objects.select_for_update().get(key=key)
        row.failures += 1
        row.last_error = error[:500]
        if row.failing_since is None:
            row.failing_since = now
        opens = row.state == BreakerState.HALF_OPEN or (
            row.state == BreakerState.CLOSED and row.failures >= int(settings.BREAKER_FAILURE_THRESHOLD)
        )
        if opens:
            row.trips += 1
            row.state = BreakerState.OPEN
            row.open_until = now + cooldown(row.trips)
            row.trial_until = None
        row.save()
    return row


def release(key: str) -> None:
    """The trial call ended without a verdict on the destination (a bug, a time limit of the task): another caller
    may make it at once, instead of after the trial's lease. Only the trial's caller calls this."""
    now = timezone.now()
    CircuitBreaker.objects.filter(key=key, state=BreakerState.HALF_OPEN).update(
        state=BreakerState.OPEN, open_until=now, trial_until=None, updated_at=now
    )


def state_of(key: str) -> CircuitBreaker | None:
    """The breaker of ``key`` as stored (None: never failed, closed)."""
    return CircuitBreaker.objects.filter(key=key).first()


def describe(target: Endpoint | None) -> str:
    """The breakers of ``target`` in words (admin pages): its own, then its host's connections when they failed,
    with the keys to find them among the breakers."""
    return explain(target)[0]


def explain(target: Endpoint | None) -> tuple[str, bool]:
    """``describe``'s words, and whether the endpoint's own breaker lets calls through (closed, or never opened;
    False without a target)."""
    if target is None:
        return gettext("no breaker: the configuration names no host"), False
    words, closed = _words(target.key)
    text = gettext("%(state)s (breaker %(key)s)") % {"state": words, "key": target.key}
    host = state_of(target.host)
    if host is not None and (host.state != BreakerState.CLOSED or host.failures):
        text += gettext("; connections to the host: %(state)s (breaker %(key)s)") % {
            "state": _words(target.host)[0],
            "key": target.host,
        }
    return text, closed


def _words(key: str) -> tuple[str, bool]:
    state = state_of(key)
    if state is None or (state.state == BreakerState.CLOSED and not state.failures):
        text = gettext("closed: no failure since the last success")
    elif state.state == BreakerState.CLOSED:
        text = gettext("closed: %(failures)s failure(s) in a row (last: %(error)s)") % {
            "failures": state.failures,
            "error": state.last_error,
        }
    elif state.state == BreakerState.HALF_OPEN:
        text = gettext("half-open: one trial call decides whether it closes")
    else:
        until = state.open_until.isoformat(timespec="seconds") if state.open_until else "?"
        text = gettext("open until %(until)s after %(failures)s failure(s) in a row (last: %(error)s)") % {
            "until": until,
            "failures": state.failures,
            "error": state.last_error,
        }
    return text, state is None or state.state == BreakerState.CLOSED


def reset(*, keys: Iterable[str] = (), prefix: str | None = None) -> int:
    """Close these breakers (by key, or every key starting with ``prefix``) as if never failed: staff said the
    destination works again. Returns how many there were."""
    query = Q(key__in=list(keys))
    if prefix:
        query |= Q(key__startswith=prefix)
    deleted, _ = CircuitBreaker.objects.filter(query).delete()
    clear_memo()
    return deleted
