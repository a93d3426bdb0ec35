"""Notices mailed to a retailer's members when a partner breaks, and the daily digest (docs/backoffice.md,
"Notifications").

Three kinds (``accounts.models.NotificationKind``), each sent to the account's active members who want it
(``accounts.selectors.members_notified``: their own choice, else their role's default):

* **queue_disabled**: an export queue was turned off, by a person or by the system (``exports.circuit``
  disables a queue failing for ``EXPORT_QUEUE_DISABLE_AFTER_DAYS``). The disable's audit entry, written in the
  disabling transaction, is the outbox: a queue off now whose latest disable is recorded within ``LOOKBACK`` is
  told once per entry, so a rolled-back disable (no entry, the queue still on) sends nothing.
* **breaker_open**: a destination's circuit breaker (``core.breaker``: an export queue's endpoint or host, a
  runtime integration's) is open or half-open and its failures began more than ``NOTIFY_BREAKER_OPEN_SECONDS``
  ago: told once per open period (the period is named by the breaker's ``failing_since``, which a success
  clears).
* **daily_digest**: yesterday (UTC) in one mail per account: deliveries sent and failed per queue, failed
  attempts by reason, import errors, runtime integration failures. From ``NOTIFY_DIGEST_HOUR`` (UTC) on, once a
  day per member.

Every link in a mail is absolute, ``SITE_URL`` and the page's path reversed from its name in ``backoffice/urls.py``:
the mails are sent from Celery, with no request whose host a link could take. Each names the mail's account
(``backoffice.members.in_account``), so it opens the page in that account even for a reader working in another.

Each mail is claimed first by a ``NotificationSent`` row (membership, kind, subject key: unique), then sent; a
mail the relay refuses is logged and its claim removed, so the next run tries it again; a relay that cannot be
reached ends the run (the rest waits for the next one). At most ``NOTIFY_MAX_MAILS_PER_RUN`` mails a run. A
process killed between a claim and its send loses that one notice: a notice is sent at most once.
"""

from __future__ import annotations

import logging
import smtplib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from accounts.models import Account, AuditEntry, Membership, NotificationKind, NotificationPreference
from accounts.selectors import members_notified
from accounts.services import language_of
from backoffice.members import in_account
from core.models import BreakerState, CircuitBreaker
from exports import circuit
from exports.models import ExportAttempt, ExportDelivery, ExportQueue, ExportStatus
from imports.models import ImportItem, ImportStatus
from integrations import runtime
from integrations.models import IntegrationCall, RuntimeIntegration
from ops.models import NotificationSent

__all__ = ("LOOKBACK", "Notice", "Run", "notify_digests", "notify_problems")

logger = logging.getLogger(__name__)

# A disable is told while its audit entry is younger than this (a relay away for longer drops the notice).
LOOKBACK = timedelta(hours=24)
# Lines of each list of the digest.
DIGEST_ROWS = 10
# The audit trail's code for export queues (exports.trail.QUEUE).
_QUEUE = "export_queue"


@dataclass(frozen=True)
class Notice:
    """One thing to tell an account's members of ``kind``: ``subject_key`` names it for ``NotificationSent``;
    ``compose`` writes its subject and body in the active language (called once per recipient language)."""

    account: Account
    kind: str
    subject_key: str
    compose: Callable[[], tuple[str, str]]


@dataclass
class Run:
    """What one run did: mails sent, mails that failed (tried again next run), whether it stopped early (the
    relay unreachable, or ``NOTIFY_MAX_MAILS_PER_RUN`` reached)."""

    sent: int = 0
    failed: int = 0
    stopped: bool = False
    sent_to: list[str] = field(default_factory=list)


# --- What to tell ----------------------------------------------------------------------------------------------


def _link(account: Account, name: str, *args: object) -> str:
    """The back-office page ``name`` (backoffice/urls.py) of ``account`` as a link a reader can open from the mail:
    ``SITE_URL`` and the page's path (mails are sent from Celery, with no request to take the host from), naming
    the account (a reader in several accounts may be working in another)."""
    return str(settings.SITE_URL) + in_account(reverse(f"backoffice:{name}", args=args), account)


def _disabled(entry: AuditEntry) -> bool:
    if entry.action == "disabled":
        return True
    enabled = entry.changes.get("enabled") if isinstance(entry.changes, dict) else None
    return entry.action == "changed" and enabled == [True, False]


def queue_disabled_notices(*, now: datetime) -> Iterator[Notice]:
    """Each export queue off now whose latest disable was recorded within ``LOOKBACK`` (one query for the queues,
    one per queue on the audit trail's per-target index)."""
    since = now - LOOKBACK
    queues = ExportQueue.objects.filter(enabled=False, updated_at__gte=since).select_related("account").order_by("pk")
    for queue in queues:
        entries = AuditEntry.objects.filter(
            account_id=queue.account_id,
            target_type=_QUEUE,
            target_id=str(queue.pk),
            at__gte=since,
            action__in=("disabled", "changed"),
        ).order_by("-at", "-id")[:20]
        entry = next((e for e in entries if _disabled(e)), None)
        if entry is None:
            continue
        yield Notice(
            account=queue.account,
            kind=NotificationKind.QUEUE_DISABLED,
            subject_key=f"queue:{queue.pk}:{entry.pk}",
            compose=partial(_queue_disabled_mail, queue, entry),
        )


def _queue_disabled_mail(queue: ExportQueue, entry: AuditEntry) -> tuple[str, str]:
    """The subject and body telling of the queue's disable ``entry``, in the active language."""
    values = {
        "identifier": queue.account.identifier,
        "account": queue.account.name,
        "queue": queue.name,
        "link": _link(queue.account, "queue", queue.pk),
        "by": gettext("the system") if entry.actor_kind == "system" else entry.actor,
        "at": entry.at.isoformat(timespec="seconds"),
        "reason": queue.disabled_reason or gettext("turned off"),
    }
    subject = gettext("[%(identifier)s] Export queue '%(queue)s' was disabled") % values
    body = (
        gettext(
            "The export queue '%(queue)s' of the account %(account)s (%(identifier)s) was disabled by %(by)s at %(at)s."
        )
        % values
        + "\n\n"
        + gettext("Reason: %(reason)s") % values
        + "\n\n"
        + gettext(
            "Nothing new is queued for it; its pending items ended as failures that can be sent again once it is "
            "enabled."
        )
        + "\n"
        + gettext("The queue: %(link)s") % values
        + "\n"
    )
    return subject, body


def _account_of(key: str) -> int | None:
    head = key.split("|", 1)[0]
    if not head.startswith("acct:"):
        return None
    try:
        return int(head.removeprefix("acct:"))
    except ValueError:
        return None


def _users_of(account: Account, key: str) -> list[str]:
    """What of the account sends through the breaker ``key``: its export queues and runtime integrations."""
    users = []
    for queue in ExportQueue.objects.filter(account=account).order_by("name"):
        target = circuit.target_of(queue)
        if target is not None and key in (target.key, target.host):
            users.append(
                gettext("export queue '%(name)s' (%(link)s)")
                % {"name": queue.name, "link": _link(account, "queue", queue.pk)}
            )
    for integration in RuntimeIntegration.objects.filter(account=account).order_by("kind"):
        found = runtime.breaker_target(account, integration.url)
        if found is not None and key in (found.key, found.host):
            users.append(
                gettext("runtime integration '%(kind)s' (%(link)s)")
                % {"kind": integration.kind, "link": _link(account, "integration", integration.pk)}
            )
    return users


def _where(key: str) -> str:
    """The breaker key's destination as shown: its origin (``https://erp.example.com:443``), never the digest."""
    parts = key.split("|")[1:]
    if parts and parts[-1] == "host":
        return gettext("connections to %(host)s") % {"host": parts[-2]} if len(parts) >= 2 else key
    origin = next((part for part in parts if "://" in part), "")
    return origin or key


def breaker_notices(*, now: datetime) -> Iterator[Notice]:
    """Each breaker open (or half-open) whose failures began more than ``NOTIFY_BREAKER_OPEN_SECONDS`` ago."""
    since = now - timedelta(seconds=float(settings.NOTIFY_BREAKER_OPEN_SECONDS))
    rows = CircuitBreaker.objects.filter(
        state__in=(BreakerState.OPEN, BreakerState.HALF_OPEN), failing_since__lte=since
    ).order_by("key")
    accounts: dict[int, Account | None] = {}
    for row in rows:
        account_id = _account_of(row.key)
        if account_id is None:
            continue
        if account_id not in accounts:
            accounts[account_id] = Account.objects.filter(pk=account_id).first()
        account = accounts[account_id]
        if account is None or row.failing_since is None:
            continue
        started = row.failing_since.isoformat(timespec="seconds")
        yield Notice(
            account=account,
            kind=NotificationKind.BREAKER_OPEN,
            subject_key=f"breaker:{row.key}:{started}",
            compose=partial(_breaker_mail, account, row, started),
        )


def _breaker_mail(account: Account, row: CircuitBreaker, started: str) -> tuple[str, str]:
    """The subject and body telling that the breaker ``row`` has been open since ``started``, in the active
    language."""
    users = _users_of(account, row.key)
    nothing = gettext("(nothing of the account uses it any more)")
    values = {
        "identifier": account.identifier,
        "account": account.name,
        "where": _where(row.key),
        "started": started,
        "error": row.last_error or "-",
        "failures": row.failures,
    }
    subject = gettext("[%(identifier)s] %(where)s has been failing since %(started)s") % values
    body = (
        gettext(
            "Calls of the account %(account)s (%(identifier)s) to %(where)s have been failing since %(started)s; "
            "its circuit breaker is open, so nothing is sent there until a trial call succeeds (deliveries wait, "
            "they are not lost)."
        )
        % values
        + "\n\n"
        + gettext("Last error: %(error)s") % values
        + "\n"
        + gettext("Failures in a row: %(failures)s") % values
        + "\n\n"
        + gettext("Used by:")
        + "\n"
        + ("".join(f"  - {user}\n" for user in users) or f"  - {nothing}\n")
        + "\n"
        + gettext("You are told once while it stays open; a success closes it.")
        + "\n"
    )
    return subject, body


# --- The daily digest ------------------------------------------------------------------------------------------


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), tzinfo=UTC)
    return start, start + timedelta(days=1)


def digest_body(*, account: Account, day: date) -> str:
    """The account's ``day`` (UTC) in words: deliveries sent and failed per queue, failed attempts by reason,
    import errors by kind, runtime integration failures by kind. Four grouped queries on indexed columns."""
    start, end = _day_bounds(day)
    per_queue: dict[str, dict[str, int]] = defaultdict(lambda: {"ok": 0, "failed": 0})
    deliveries = (
        ExportDelivery.objects.filter(
            account=account,
            finished_at__gte=start,
            finished_at__lt=end,
            status__in=(ExportStatus.SUCCESS, ExportStatus.FAILURE),
        )
        .values("queue__name", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in deliveries:
        per_queue[row["queue__name"]]["ok" if row["status"] == ExportStatus.SUCCESS else "failed"] += row["n"]
    reasons = (
        ExportAttempt.objects.filter(account=account, ok=False, started_at__gte=start, started_at__lt=end)
        .values("delivery__queue__name", "error", "status_code")
        .annotate(n=Count("id"), last=Max("started_at"))
        .order_by("-n", "-last")[:DIGEST_ROWS]
    )
    imports = (
        ImportItem.objects.filter(
            account=account,
            status__in=(ImportStatus.FAILURE, ImportStatus.REJECTED),
            created_at__gte=start,
            created_at__lt=end,
        )
        .values("kind", "status")
        .annotate(n=Count("id"))
        .order_by("-n", "kind")[:DIGEST_ROWS]
    )
    calls = (
        IntegrationCall.objects.filter(account=account, created_at__gte=start, created_at__lt=end)
        .values("kind")
        .annotate(n=Count("id"), failed=Count("id", filter=Q(ok=False)))
        .filter(failed__gt=0)
        .order_by("-failed", "kind")[:DIGEST_ROWS]
    )
    none = "  " + gettext("none")
    heading = gettext("The account %(account)s (%(identifier)s) on %(day)s (UTC).") % {
        "account": account.name,
        "identifier": account.identifier,
        "day": day.isoformat(),
    }
    lines = [heading, "", gettext("Deliveries:")]
    lines += [
        f"  {name}: " + gettext("%(ok)s sent, %(failed)s failed") % {"ok": counts["ok"], "failed": counts["failed"]}
        for name, counts in sorted(per_queue.items())
    ] or ["  " + gettext("none finished")]
    lines += ["", gettext("Failed attempts by reason:")]
    lines += [f"  {row['delivery__queue__name']}: {row['n']} x {_reason(row)}" for row in reasons] or [none]
    lines += ["", gettext("Import errors:")]
    lines += [f"  {row['kind']}: {row['n']} {row['status']}" for row in imports] or [none]
    lines += ["", gettext("Runtime integration failures:")]
    lines += [
        f"  {row['kind']}: " + gettext("%(failed)s of %(n)s calls failed") % {"failed": row["failed"], "n": row["n"]}
        for row in calls
    ] or [none]
    links = {"dashboard": _link(account, "dashboard"), "log": _link(account, "export-log")}
    lines += ["", gettext("The dashboard: %(dashboard)s · the export log: %(log)s") % links, ""]
    return "\n".join(lines)


def _reason(row: Mapping[str, Any]) -> str:
    status = row["status_code"]
    return str(row["error"] or (f"HTTP {status}" if status else gettext("failed")))[:200]


def _digest_day(now: datetime) -> date | None:
    """The day whose digest is due at ``now``: yesterday (UTC) once ``NOTIFY_DIGEST_HOUR`` has come, else None."""
    utc = now.astimezone(UTC)
    if utc.hour < int(settings.NOTIFY_DIGEST_HOUR):
        return None
    return utc.date() - timedelta(days=1)


def digest_notices(*, now: datetime) -> Iterator[Notice]:
    """The digest of each account where a member opted in, for the day due (nothing before the hour)."""
    day = _digest_day(now)
    if day is None:
        return
    wanting = NotificationPreference.objects.filter(daily_digest=True).values("account_id")
    for account in Account.objects.filter(pk__in=wanting).order_by("pk"):
        yield Notice(
            account=account,
            kind=NotificationKind.DAILY_DIGEST,
            subject_key=f"digest:{day.isoformat()}",
            compose=partial(_digest_mail, account, day),
        )


def _digest_mail(account: Account, day: date) -> tuple[str, str]:
    subject = gettext("[%(identifier)s] Daily digest of %(day)s") % {
        "identifier": account.identifier,
        "day": day.isoformat(),
    }
    return subject, digest_body(account=account, day=day)


def _language(membership: Membership) -> str:
    """The language of the member's mails: the one they chose for the back-office, else ``LANGUAGE_CODE``."""
    return language_of(user=membership.user) or str(settings.LANGUAGE_CODE)


# --- Sending ---------------------------------------------------------------------------------------------------


def _claim(notice: Notice, membership: Membership) -> NotificationSent | None:
    try:
        with transaction.atomic():
            return NotificationSent.objects.create(
                account=notice.account, membership=membership, kind=notice.kind, subject_key=notice.subject_key
            )
    except IntegrityError:
        return None  # another run has it


def _send_all(notices: Iterable[Notice]) -> Run:
    """Mail each notice to the members of its account who want it and have not had it; bounded, never raises
    for a mail that fails."""
    run = Run()
    budget = int(settings.NOTIFY_MAX_MAILS_PER_RUN)
    connection = get_connection(fail_silently=False)
    try:
        for notice in notices:
            members = members_notified(account=notice.account, kind=notice.kind)
            had = set(
                NotificationSent.objects.filter(
                    membership__in=members, kind=notice.kind, subject_key=notice.subject_key
                ).values_list("membership_id", flat=True)
            )
            written: dict[str, tuple[str, str]] = {}  # each language's subject and body, written once
            for membership in members:
                address = str(membership.user.email or membership.user.get_username())
                if membership.pk in had or "@" not in address:
                    continue
                if run.sent + run.failed >= budget:
                    run.stopped = True
                    return run
                claim = _claim(notice, membership)
                if claim is None:
                    continue
                language = _language(membership)
                if language not in written:
                    with translation.override(language):
                        written[language] = notice.compose()
                subject, body = written[language]
                message = EmailMessage(subject=subject, body=body, to=[address], connection=connection)
                try:
                    message.send()
                except (smtplib.SMTPResponseException, smtplib.SMTPRecipientsRefused) as exc:
                    claim.delete()
                    run.failed += 1
                    logger.warning(
                        "notification %s %s to member %s refused by the relay, tried again next run: %s",
                        notice.kind,
                        notice.subject_key,
                        membership.pk,
                        exc,
                    )
                    _reset(connection)
                except OSError as exc:  # no relay to talk to: the rest waits for the next run
                    claim.delete()
                    run.failed += 1
                    run.stopped = True
                    logger.warning(
                        "notification %s %s to member %s not sent, the relay is unreachable; next run: %s",
                        notice.kind,
                        notice.subject_key,
                        membership.pk,
                        exc,
                    )
                    return run
                else:
                    run.sent += 1
                    run.sent_to.append(address)
    finally:
        _reset(connection)
    return run


def _reset(connection: object) -> None:
    """Close the relay's connection (after a refusal it may be in any state; the next mail opens a new one)."""
    try:
        connection.close()  # type: ignore[attr-defined]
    except Exception:  # closing a broken connection must not end the run
        logger.debug("closing the mail connection failed", exc_info=True)


def notify_problems(*, now: datetime | None = None) -> Run:
    """Beat, every minute: tell members of queues disabled and of breakers open too long (safe to run twice)."""
    at = now or timezone.now()

    def notices() -> Iterator[Notice]:
        yield from queue_disabled_notices(now=at)
        yield from breaker_notices(now=at)

    return _send_all(notices())


def notify_digests(*, now: datetime | None = None) -> Run:
    """Beat, every 15 minutes: yesterday's digest to each member who asked for it, once (safe to run twice)."""
    return _send_all(digest_notices(now=now or timezone.now()))
