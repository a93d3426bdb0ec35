"""The operations dashboard in the admin (docs/operations.md, Observability): export backlog per queue, failures in the
last 24 hours, slowest runtime integrations. Linked from the admin index; read from ``ops.selectors``.

The heartbeat row is bookkeeping and stays out of the admin (``/health/ready`` shows its age).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone

from ops import health, selectors
from ops.services import BEAT

# The dashboard shows every account's logs: a staff user needs the view permission of each of them.
DASHBOARD_PERMISSIONS = ("exports.view_exportdelivery", "imports.view_importitem", "integrations.view_integrationcall")
FAILURE_WINDOW = timedelta(hours=24)

# The index links to the dashboard.
admin.site.index_template = "admin/ops/index.html"


def processes(now: datetime) -> list[dict[str, object]]:
    """Every worker and beat process of every machine, alive or stopped (until pruned), with the beat lease's
    holder marked: the dashboard's table."""
    lease = selectors.beat_lease(name=BEAT)
    holder = lease.holder if lease is not None and lease.expires_at > now else ""
    timeout = settings.LIVENESS_TIMEOUT_SECONDS
    return [
        {
            "machine": row.hostname,
            "kind": row.kind,
            "pid": row.pid,
            "seen_ago": int((now - row.seen_at).total_seconds()),
            "alive": (now - row.seen_at).total_seconds() < timeout,
            "active": row.name == holder,
        }
        for row in selectors.live_processes()
    ]


def dashboard(request: HttpRequest) -> TemplateResponse:
    if not request.user.has_perms(DASHBOARD_PERMISSIONS):
        raise PermissionDenied
    now = timezone.now()
    since = now - FAILURE_WINDOW
    backlog = selectors.export_backlog()
    import_pending, import_oldest = selectors.import_backlog()
    overdue_after = timedelta(seconds=settings.HEALTH_EXPORT_DUE_MAX_AGE_SECONDS)
    context = {
        **admin.site.each_context(request),
        "title": "Operations dashboard",
        "now": now,
        "since": since,
        "backlog": backlog,
        "backlog_total": sum(q.pending for q in backlog),
        "import_pending": import_pending,
        "import_oldest_age": int((now - import_oldest).total_seconds()) if import_oldest else None,
        "export_failures": selectors.export_failures(since=since),
        "failed_attempts": selectors.failed_export_attempts(since=since),
        "import_failures": selectors.import_failures(since=since),
        "slowest": selectors.slowest_integrations(since=since),
        "heartbeat_at": selectors.heartbeat_at(name=BEAT),
        # The checks of /health/ready as this web process answers them, then what they count, by name.
        "health": health.report(),
        "processes": processes(now),
        "beat_lease": selectors.beat_lease(name=BEAT),
        "overdue_queues": (
            selectors.overdue_export_queues(due_before=now - overdue_after)
            if settings.HEALTH_EXPORT_DUE_MAX_AGE_SECONDS > 0
            else []
        ),
    }
    # The two failure tables are drawn alike: an import's row also has its status.
    context["failure_tables"] = [
        {
            "id": "export-failures",
            "caption": "Export deliveries failed",
            "source": "Queue",
            "count": "Failed deliveries",
            "statuses": False,
            "rows": context["export_failures"],
        },
        {
            "id": "import-failures",
            "caption": "Import log entries failed or rejected",
            "source": "Kind",
            "count": "Items",
            "statuses": True,
            "rows": context["import_failures"],
        },
    ]
    return TemplateResponse(request, "admin/ops/dashboard.html", context)
