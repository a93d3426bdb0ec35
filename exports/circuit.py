"""Exports behind a circuit breaker per endpoint, and queues disabled after days of failure.

``deliver`` stands between ``exports.services`` and a delivery's ``deliver``, through the one outbound-call
lifecycle (``core.calls.guarded_call``): it asks the breaker of the queue's endpoint (``core.breaker``;
``endpoint_of`` says what the endpoint is: the web hook's full URL, the FTP/SFTP server with its user and
directory, the SMTP relay with the recipients), so that one endpoint failing never pauses another queue of the
account on the same host, and either sends and reports the outcome to the breaker, or sends nothing and answers a
``DeliveryResult`` with ``paused_until``: the breaker is open. Such a delivery is **paused**, not failed: ``pause``
takes its lease's attempt back (the spec's retry rule, ``exports.retry``, counts real attempts only), records no
attempt, keeps its items pending and makes it due again when the breaker may let a call through. Only failures of
the destination itself (``DeliveryResult.unreachable``: no connection, a timeout, a 5xx, a temporary
server reply) count towards the breaker; any other answer shows the destination is up and closes it.

``note_outcomes`` keeps each queue's ``failing_since`` (the first failure since its last success). A queue whose
destination has failed that way for ``EXPORT_QUEUE_DISABLE_AFTER_DAYS`` is disabled, as Svix disables an endpoint:
``enabled`` turns off with ``disabled_at`` and ``disabled_reason``, nothing new is queued for it (``enqueue`` and
the cron windows take enabled queues only), and its pending items end as failures carrying the reason, so that
staff can send them again (the queue's ``retry``) once it works. ``enable_queue`` (the admin action, ``POST
/api/v1/export-queues/{id}/enable``, or ``enabled: true`` in a ``PATCH``) turns it back on and resets its breaker.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts import audit
from accounts.models import Account
from core import breaker, calls
from core.errors import ServiceError
from exports import trail
from exports.deliveries import REGISTRY as DELIVERIES
from exports.deliveries.base import DeliveryResult, RenderContext, Rendered
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus

__all__ = (
    "close_breaker",
    "deliver",
    "describe",
    "disable_queue",
    "enable_queue",
    "endpoint_of",
    "explain",
    "give_back_attempts",
    "key_of",
    "note_outcomes",
    "pause",
    "paused",
    "reopened",
    "target_of",
)


def endpoint_of(delivery: dict[str, Any]) -> str:
    """The endpoint a delivery configuration sends to, as a URL naming all of it ("" when it cannot say): the web
    hook's URL; ``ftp://user@host:port/directory`` (the directory of the path template, unrendered: a
    ``{date}`` in it is still one endpoint); ``smtp://relay:port/?to=a@x,b@y`` (the operator's relay and the
    recipients, sorted: the relay's temporary refusals are mostly about recipients and their domains)."""
    kind = delivery.get("type")
    if kind == "webhook":
        return str(delivery.get("url") or "")
    if kind in ("ftp", "sftp"):
        host = str(delivery.get("host") or "").strip().lower()
        if not host:
            return ""
        port = delivery.get("port") or (21 if kind == "ftp" else 22)
        user = quote(str(delivery.get("username") or ""), safe="")
        directory = posixpath.dirname(str(delivery.get("path") or ""))
        return f"{kind}://{user}@{_host(host)}:{port}/{quote(directory.lstrip('/'), safe='/{}')}"
    if kind == "email":  # the operator's relay (Django's EMAIL_* settings), whatever the queue
        recipients = delivery.get("recipients")
        to = sorted(str(r).strip().lower() for r in recipients) if isinstance(recipients, list) else []
        relay = _host(str(settings.EMAIL_HOST).lower())
        return f"smtp://{relay}:{settings.EMAIL_PORT}/?to={quote(','.join(to), safe='@,')}"
    return ""


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def target_of(queue: ExportQueue) -> breaker.Endpoint | None:
    """The breakers of the queue's endpoint and of its host's connections; None for an unknown configuration
    (nothing to guard)."""
    endpoint = endpoint_of(queue.delivery if isinstance(queue.delivery, dict) else {})
    return breaker.target(account_id=queue.account_id, endpoint=endpoint) if endpoint else None


def key_of(queue: ExportQueue) -> str | None:
    """The breaker key of the queue's endpoint, or None (an unknown configuration: nothing to guard)."""
    target = target_of(queue)
    return target.key if target is not None else None


def pause_message(until: datetime, *, host: bool = False) -> str:
    what = "host circuit (connections failing)" if host else "endpoint circuit"
    return f"paused: {what} open until {until.isoformat(timespec='seconds')}"


def _paused(ticket: breaker.Ticket) -> DeliveryResult:
    until = ticket.decision.retry_at or timezone.now()
    return DeliveryResult(ok=False, error=pause_message(until, host=ticket.host_refused), paused_until=until)


def deliver(
    rendered: Rendered,
    *,
    queue: ExportQueue,
    delivery_id: str,
    context: RenderContext,
    timeout: float | None = None,
) -> DeliveryResult:
    """The queue's delivery of ``rendered``, unless its endpoint's breaker, or its host's, is open (then nothing
    is sent and the result carries ``paused_until``)."""
    if queue.disabled_at is not None and not queue.enabled:
        return DeliveryResult(ok=False, error=f"not sent: the export queue is disabled ({queue.disabled_reason})")
    config = queue.delivery

    def send(_: calls.Call) -> DeliveryResult:
        return DELIVERIES[config["type"]].deliver(
            rendered, config=config, delivery_id=delivery_id, context=context, timeout=timeout
        )

    outcome = calls.guarded_call(target_of(queue), send, settle=_judged)
    return _paused(outcome.ticket) if isinstance(outcome, calls.Paused) else outcome


def _judged(result: DeliveryResult) -> tuple[DeliveryResult, calls.Verdict]:
    """The delivery's result and what it says of the destination. A refusal of this request (a 4xx, a login) is
    no failure of the destination: it answered."""
    failed = not result.ok and result.unreachable
    return result, calls.Verdict(failed=failed, connecting=result.connecting, error=result.error)


def describe(queue: ExportQueue) -> str:
    """The state of the queue's endpoint breaker (and its host's), in words (the admin's queue page)."""
    return breaker.describe(target_of(queue))


def explain(queue: ExportQueue) -> tuple[str, bool]:
    """``describe``'s words, and whether the queue's endpoint breaker lets calls through (False without a host)."""
    return breaker.explain(target_of(queue))


def paused(queue: ExportQueue) -> DeliveryResult | None:
    """The paused result ``deliver`` would give now, asked before costly work (rendering a cron window's file);
    None when the breakers may let the call through (``deliver`` then decides)."""
    target = target_of(queue)
    ticket = breaker.look(target) if target is not None else None
    return _paused(ticket) if ticket is not None and not ticket.decision.allowed else None


def pause(delivery: ExportDelivery, result: DeliveryResult) -> None:
    """Make ``delivery`` (leased, not sent: ``result.paused_until``) wait for its destination: it is due at the
    breaker's reopening and its last attempt's outcome stays as it was (saved by the caller, with
    ``give_back_attempts`` for the lease's count)."""
    assert result.paused_until is not None
    delivery.attempts = max(0, delivery.attempts - 1)
    delivery.lease_until = None
    delivery.next_attempt_at = max(delivery.next_attempt_at, result.paused_until)
    delivery.paused_until = result.paused_until
    delivery.pause_reason = result.error[:300]


def give_back_attempts(delivery_pks: Iterable[int]) -> None:
    """The attempt each lease counted, given back to these paused deliveries: a pause is not an attempt. Relative
    (``attempts - 1``), so that it never writes back a count another worker changed."""
    pks = list(delivery_pks)
    if pks:
        ExportDelivery.objects.filter(pk__in=pks, attempts__gt=0).update(attempts=F("attempts") - 1)


def note_outcomes(outcomes: Iterable[tuple[ExportQueue, DeliveryResult]]) -> list[int]:
    """Keep each queue's ``failing_since`` from these outcomes (sent or paused; skipped ones left out) and disable
    the queues failing for ``EXPORT_QUEUE_DISABLE_AFTER_DAYS``. Returns the ids of the queues disabled. Runs in the
    transaction that records the outcomes."""
    now = timezone.now()
    queues: dict[int, ExportQueue] = {}
    succeeded: set[int] = set()
    failed: set[int] = set()
    for queue, result in outcomes:
        queues[queue.pk] = queue
        if result.ok:
            succeeded.add(queue.pk)
        elif result.paused_until is None:
            failed.add(queue.pk)
    failed -= succeeded
    if succeeded:
        ExportQueue.objects.filter(pk__in=succeeded, failing_since__isnull=False).update(failing_since=None)
    if failed:
        ExportQueue.objects.filter(pk__in=failed, failing_since__isnull=True).update(failing_since=now)
    days = float(settings.EXPORT_QUEUE_DISABLE_AFTER_DAYS)
    watched = set(queues) - succeeded
    if days <= 0 or not watched:
        return []
    since = now - timedelta(days=days)
    disabled: list[int] = []
    for queue in ExportQueue.objects.filter(pk__in=watched, enabled=True, failing_since__lte=since):
        assert queue.failing_since is not None
        since_text = queue.failing_since.isoformat(timespec="seconds")
        reason = (
            f"disabled automatically: every delivery has failed since {since_text} "
            f"(EXPORT_QUEUE_DISABLE_AFTER_DAYS={days:g}); enable the queue once its destination works"
        )
        if disable_queue(queue=queue, reason=reason, actor=audit.SYSTEM):
            disabled.append(queue.pk)
    return disabled


def disable_queue(*, queue: ExportQueue, reason: str, actor: audit.Actor | None = None) -> bool:
    """Turn the queue off (as Svix disables an endpoint) with ``reason``; its pending items end as
    failures carrying the reason (the queue's ``retry`` sends them again). False when it was off already.
    Recorded in the audit trail as ``disabled`` by ``actor`` (``note_outcomes``: the system)."""
    now = timezone.now()
    before = trail.queue_fields(queue)
    with transaction.atomic():
        if not ExportQueue.objects.filter(pk=queue.pk, enabled=True).update(
            enabled=False, disabled_at=now, disabled_reason=reason, updated_at=now
        ):
            return False
        pending = ExportDelivery.objects.filter(queue_id=queue.pk, status=ExportStatus.PENDING)
        ExportItem.objects.filter(queue_id=queue.pk, status=ExportStatus.PENDING).update(
            status=ExportStatus.FAILURE, message=reason
        )
        pending.update(
            status=ExportStatus.FAILURE,
            error=reason[:2000],
            finished_at=now,
            lease_until=None,
            paused_until=None,
            pause_reason="",
        )
        queue.enabled, queue.disabled_at, queue.disabled_reason = False, now, reason
        before["enabled"] = True  # as the update found it, whatever the caller's copy said
        trail.record_queue(account=queue.account, queue=queue, before=before, actor=actor)
    return True


def reopened(queue: ExportQueue) -> list[str]:
    """Set what turning ``queue`` on again changes: on, the disable's reason and the failures' start cleared.
    Returns the fields to save (the caller saves them, with ``close_breaker`` after its commit)."""
    queue.enabled = True
    queue.disabled_at = None
    queue.disabled_reason = ""
    queue.failing_since = None
    return ["enabled", "disabled_at", "disabled_reason", "failing_since"]


def close_breaker(queue: ExportQueue) -> None:
    """Close the breakers of the queue's endpoint and host, so that its next delivery is sent at once."""
    target = target_of(queue)
    if target is not None:
        breaker.reset(keys=[target.key, target.host])


def enable_queue(*, account: Account, queue: ExportQueue) -> ExportQueue:
    """Turn a queue on again (after an automatic disable: staff say its destination works): the reason
    is cleared and the endpoint's breaker closed, so the next delivery is sent at once. Recorded in the audit
    trail as ``enabled`` (nothing when it was on already)."""
    if queue.account_id != account.pk:
        raise ServiceError("the queue belongs to another account", field="queue")
    with transaction.atomic():
        before = trail.queue_fields(queue)
        queue.save(update_fields=[*reopened(queue), "updated_at"])
        trail.record_queue(account=account, queue=queue, before=before)
    close_breaker(queue)
    return queue
