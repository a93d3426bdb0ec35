from __future__ import annotations

from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Observability: health checks, Prometheus metrics, structured logs with a request id, the dashboard."""

    name = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        # Cross-cutting plumbing, not business flow: the request id rides along with every Celery task
        # published during a request and is restored in the worker's log context.
        from django.core.signals import request_finished

        from ops import checks  # noqa: F401 - registers the deployment checks
        from ops.logging import connect_celery_signals
        from ops.middleware import clear_request_id

        connect_celery_signals()
        request_finished.connect(clear_request_id, dispatch_uid="ops.request_id.clear")
