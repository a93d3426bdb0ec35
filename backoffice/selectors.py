"""What the back-office's pages read that no single domain app answers: the dashboard's figures of one account.
Every function takes the account and reads only its rows, on indexes that lead with the account or its queues."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Avg, Count, Max, Min, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import Account
from core.errors import ServiceError
from core.models import BreakerState, CircuitBreaker
from exports import circuit, outputs
from exports.models import ExportAttempt, ExportItem, ExportQueue, ExportStatus
from exports.openapi import wrapper_name
from exports.selectors import export_queues
from integrations import runtime
from integrations.models import IntegrationCall
from integrations.selectors import runtime_integrations
from ledger.models import Sale

# The dashboard looks this far back.
RECENT = timedelta(hours=24)
# Rows of each of the dashboard's lists.
DASHBOARD_ROWS = 10


@dataclass(frozen=True)
class QueueHealth:
    queue: ExportQueue
    pending: int
    oldest_pending: datetime | None
    failed_recently: int
    breaker: str  # the destination's breaker, as words in the request's language ("closed", "open until ...")
    breaker_closed: bool

    @property
    def healthy(self) -> bool:
        return self.queue.enabled and not self.failed_recently and self.breaker_closed


def queue_health(*, account: Account, now: datetime | None = None) -> list[QueueHealth]:
    """Each of the account's export queues with its backlog (pending items and the oldest), its failed attempts
    of the last 24 hours and its breaker: three queries whatever the number of queues."""
    since = (now or timezone.now()) - RECENT
    queues = list(export_queues(account=account))
    pending: dict[int, tuple[int, datetime | None]] = {
        queue_id: (count, oldest)
        for queue_id, count, oldest in ExportItem.objects.filter(account=account, status=ExportStatus.PENDING)
        .values("queue_id")
        .annotate(n=Count("id"), oldest=Min("created_at"))
        .values_list("queue_id", "n", "oldest")
        .order_by()
    }
    failed = dict(
        ExportAttempt.objects.filter(account=account, ok=False, started_at__gte=since)
        .values_list("delivery__queue_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return [
        QueueHealth(
            queue=queue,
            pending=pending.get(queue.pk, (0, None))[0],
            oldest_pending=pending.get(queue.pk, (0, None))[1],
            failed_recently=failed.get(queue.pk, 0),
            breaker=breaker,
            breaker_closed=closed,
        )
        for queue in queues
        for breaker, closed in [circuit.explain(queue)]
    ]


@dataclass(frozen=True)
class FailureReason:
    queue_id: int
    queue_name: str
    reason: str
    count: int
    last_at: datetime


def export_failure_reasons(*, account: Account, now: datetime | None = None) -> list[FailureReason]:
    """The account's failed export attempts of the last 24 hours by queue and reason, most frequent first."""
    since = (now or timezone.now()) - RECENT
    rows = (
        ExportAttempt.objects.filter(account=account, ok=False, started_at__gte=since)
        .values("delivery__queue_id", "delivery__queue__name", "error", "status_code")
        .annotate(n=Count("id"), last=Max("started_at"))
        .order_by("-n", "-last")[:DASHBOARD_ROWS]
    )
    return [
        FailureReason(
            queue_id=row["delivery__queue_id"],
            queue_name=row["delivery__queue__name"],
            reason=row["error"] or (f"HTTP {row['status_code']}" if row["status_code"] else gettext("failed")),
            count=row["n"],
            last_at=row["last"],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class IntegrationHealth:
    kind: str
    calls: int
    failed: int
    slowest_ms: int
    average_ms: float
    integration_id: int | None = None  # the account's runtime integration of this kind, when there is one

    @property
    def failing(self) -> bool:
        return self.failed > 0


def integration_health(*, account: Account, now: datetime | None = None) -> list[IntegrationHealth]:
    """The account's runtime integration calls of the last 24 hours by kind: how many, how many failed, the
    slowest and the average time, and the integration of each kind; failing kinds first."""
    since = (now or timezone.now()) - RECENT
    integration_ids = dict(runtime_integrations(account=account).values_list("kind", "pk"))
    rows = (
        IntegrationCall.objects.filter(account=account, created_at__gte=since)
        .values("kind")
        .annotate(
            calls=Count("id"),
            failed=Count("id", filter=Q(ok=False)),
            slowest=Max("duration_ms"),
            mean=Avg("duration_ms"),
        )
        .order_by()
    )
    health = [
        IntegrationHealth(
            kind=row["kind"],
            calls=row["calls"],
            failed=row["failed"],
            slowest_ms=row["slowest"] or 0,
            average_ms=float(row["mean"] or 0),
            integration_id=integration_ids.get(row["kind"]),
        )
        for row in rows
    ]
    return sorted(health, key=lambda h: (-h.failed, -h.slowest_ms, h.kind))


def sales_with_warnings(*, account: Account, limit: int = DASHBOARD_ROWS) -> QuerySet[Sale]:
    """The account's newest sales whose checkout warned about them."""
    return (
        Sale.objects.filter(account=account)
        .exclude(warnings=[])
        .select_related("register", "stock_location")
        .order_by("-id")[:limit]
    )


@dataclass(frozen=True)
class Notice:
    """What the account's members are told by e-mail (ops.notifications), shown on the dashboard too: an export
    queue disabled within the last 24 hours, or a destination failing longer than NOTIFY_BREAKER_OPEN_SECONDS."""

    kind: str  # "queue_disabled" or "breaker_open"
    name: str  # the queue's name, the integration's kind
    since: datetime
    reason: str
    queue_id: int | None = None
    integration_id: int | None = None


def notices(*, account: Account, now: datetime | None = None) -> list[Notice]:
    """The account's current notices, newest first: three queries (its queues, its runtime integrations, the
    breakers they use: each endpoint's, and its host's for connection failures)."""
    now = now or timezone.now()
    queues = list(export_queues(account=account))
    found = [
        Notice("queue_disabled", q.name, q.updated_at, q.disabled_reason, queue_id=q.pk)
        for q in queues
        if not q.enabled and q.updated_at >= now - RECENT
    ]
    users: dict[str, list[tuple[str, int | None, int | None]]] = {}
    for queue in queues:
        target = circuit.target_of(queue)
        for key in (target.key, target.host) if target is not None else ():
            users.setdefault(key, []).append((queue.name, queue.pk, None))
    for integration in runtime_integrations(account=account):
        target = runtime.breaker_target(account, integration.url)
        for key in (target.key, target.host) if target is not None else ():
            users.setdefault(key, []).append((integration.kind, None, integration.pk))
    failing_before = now - timedelta(seconds=float(settings.NOTIFY_BREAKER_OPEN_SECONDS))
    for row in CircuitBreaker.objects.filter(
        key__in=list(users), state__in=(BreakerState.OPEN, BreakerState.HALF_OPEN), failing_since__lte=failing_before
    ):
        assert row.failing_since is not None
        for name, queue_id, integration_id in users[row.key]:
            found.append(Notice("breaker_open", name, row.failing_since, row.last_error, queue_id, integration_id))
    return sorted(found, key=lambda notice: notice.since, reverse=True)


@dataclass(frozen=True)
class OutputField:
    """One column of a CSV queue's rows, or one key of a simple JSON queue's objects."""

    name: str  # the column's header, or the key
    source: str  # the path, template, constant or derivation it comes from
    type: str
    always: bool  # a JSON key always present (CSV: every row has every column)
    meaning: str


@dataclass(frozen=True)
class QueueOutput:
    """What a queue sends as its transform's configuration fixes it (``exports.outputs.describe``)."""

    transform: str
    content_type: str
    csv: dict[str, Any] | None
    fields: list[OutputField]
    component: str  # the published wrapper an identity queue sends

    @property
    def line_ending(self) -> str:
        """A CSV's line terminator by its usual name."""
        return "LF" if self.csv is not None and self.csv["line_terminator"] == "\n" else "CRLF"


def _json_type(schema: dict[str, Any], types: set[str]) -> str:
    words = " or ".join(sorted(types)) if types else gettext("any")
    branches = schema.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        return gettext("%(type)s or null") % {"type": words}
    return words


def _csv_source(column: dict[str, Any]) -> str:
    if column["source"] == "path":
        return str(column["path"])
    if column["source"] == "value":
        return gettext("the value %(value)s") % {"value": json.dumps(column["value"])}
    if column["source"] == "derived":
        return gettext("the sale's type")
    return gettext("the number of line items")


def queue_output(*, queue: ExportQueue) -> QueueOutput | None:
    """The queue's output, or None when its stored configuration cannot work (its page says so elsewhere)."""
    try:
        described = outputs.describe(entity_type=queue.entity_type, transform=queue.transform)
    except ServiceError:
        return None
    fields: list[OutputField] = []
    if described["csv"] is not None:
        for column in described["csv"]["columns"]:
            cell = column["type"] + (f" ({column['date_format']})" if "date_format" in column else "")
            meaning = column.get("description", "")
            fields.append(OutputField(column["header"], _csv_source(column), cell, True, meaning))
    elif described["transform"] == "simple_json" and described["json_schema"] is not None:
        element = outputs.element_schema(queue.entity_type)
        flat = described["json_schema"]["additionalProperties"]
        for key, schema in flat["properties"].items():
            template = queue.transform["fields"][key]
            meaning = str(schema.get("description", "")).removeprefix(f"From `{template}`").lstrip(":. ")
            json_type = _json_type(schema, element.types(schema))
            fields.append(OutputField(key, template, json_type, key in flat["required"], meaning))
    component = wrapper_name(queue.entity_type) if described["transform"] == "identity" else ""
    return QueueOutput(described["transform"], described["content_type"], described["csv"], fields, component)
