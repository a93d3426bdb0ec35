"""Prometheus metrics at ``/metrics`` (spec issue 7, Observability).

Two kinds, on purpose:

- Request metrics (``http_requests_total``, ``http_request_duration_seconds``) are counted in the process that
  answers the request. With several gunicorn workers set ``PROMETHEUS_MULTIPROC_DIR`` (an empty directory, cleaned
  when the service starts) and prometheus-client's multiprocess mode adds them up across workers; without it each
  scrape sees the one worker that answered it.
- Business metrics (imports, exports, deliveries, retries, outbox backlog, integration latency) are computed from
  the database at scrape time by ``DatabaseCollector``: the work happens in Celery workers on other machines, and
  the database is the one place that knows the truth whichever process did it. Counts and latency histograms cover
  the last ``METRICS_WINDOW_SECONDS`` (gauges, not ever-growing counters: use them without ``rate()``, e.g.
  ``histogram_quantile(0.95, retail_export_delivery_duration_seconds_bucket)``).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from ops import selectors

logger = logging.getLogger(__name__)

_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

REQUESTS = Counter(
    "http_requests",
    "HTTP requests answered, by endpoint (URL route), method and status.",
    ["endpoint", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "http_request_duration_seconds", "Time to answer an HTTP request, by endpoint and method.", ["endpoint", "method"]
)


def endpoint_of(request: HttpRequest) -> str:
    """The route pattern that answered (``api/v1/sales/<pk>``), never the path: ids must not become labels."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "<unmatched>"
    return _readable_route(match.route or match.view_name or "<unnamed>")


_GROUP = re.compile(r"\(\?P<(\w+)>(?:[^()]|\([^()]*\))*\)")


@functools.lru_cache(maxsize=1024)
def _readable_route(route: str) -> str:
    """DRF router regexes read like ``path()`` routes: ``api/v1/sales/(?P<pk>[^/.]+)/?$`` -> ``/api/v1/sales/<pk>``."""
    route = _GROUP.sub(r"<\1>", route).replace("^", "")
    route = re.sub(r"/\?\$?$|\$$", "", route)
    return "/" + route


def observe_request(*, endpoint: str, method: str, status: int, seconds: float) -> None:
    method = method if method in _METHODS else "OTHER"  # any verb a client invents would be a new label
    REQUESTS.labels(endpoint=endpoint, method=method, status=str(status)).inc()
    REQUEST_SECONDS.labels(endpoint=endpoint, method=method).observe(seconds)


def _ok(value: object) -> str:
    return "success" if value else "failure"


def _histogram(name: str, documentation: str, labels: list[str], rows: list[selectors.Histogram]) -> Metric:
    """A histogram family from the selector's rows; their ``ok`` label becomes ``outcome`` (success/failure)."""
    family = HistogramMetricFamily(name, documentation, labels=labels)
    for row in rows:
        named = {**row.labels, "outcome": _ok(row.labels.get("ok") in ("True", "1"))}
        buckets = [(str(bound / 1000), count) for bound, count in row.buckets] + [("+Inf", row.count)]
        family.add_metric([named[label] for label in labels], buckets, sum_value=row.sum_ms / 1000)
    return family


class DatabaseCollector:
    """The business gauges, read from the database on each scrape (cheap aggregate queries)."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("retail_metrics_database_up", "1 when the business metrics could be read.")
        try:
            metrics = list(self._collect())
        except DatabaseError:
            logger.exception("Reading the business metrics failed")
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from metrics

    def _collect(self) -> Iterable[Metric]:
        now = timezone.now()
        window = settings.METRICS_WINDOW_SECONDS
        since = now - timedelta(seconds=window)
        suffix = f" in the last METRICS_WINDOW_SECONDS ({window} s)"

        imports = GaugeMetricFamily(
            "retail_import_items", "Import items queued" + suffix + ", by kind and status.", labels=["kind", "status"]
        )
        for kind, status, n in selectors.import_items_by_status(since=since):
            imports.add_metric([kind, status], n)
        yield imports

        pending, oldest = selectors.import_backlog()
        yield GaugeMetricFamily("retail_import_backlog", "Import items queued, not yet materialised.", value=pending)
        yield GaugeMetricFamily(
            "retail_import_oldest_pending_age_seconds",
            "Age of the oldest import item not yet materialised (0 when none).",
            value=(now - oldest).total_seconds() if oldest else 0.0,
        )

        warnings = GaugeMetricFamily(
            "retail_sale_warnings",
            "Warnings on checkouts stored as sent" + suffix + ", by account and code (docs/amounts.md).",
            labels=["account", "code"],
        )
        for account, code, n in selectors.checkout_warnings_by_code(since=since):
            warnings.add_metric([account, code], n)
        yield warnings

        exports = GaugeMetricFamily(
            "retail_export_items",
            "Export items created" + suffix + ", by account, queue and status.",
            labels=["account", "queue", "status"],
        )
        for account, queue_name, status, n in selectors.export_items_by_queue(since=since):
            exports.add_metric([account, queue_name, status], n)
        yield exports

        backlog = GaugeMetricFamily(
            "retail_export_backlog",
            "Export items not yet delivered (the outbox), by queue.",
            labels=["account", "queue"],
        )
        oldest_age = GaugeMetricFamily(
            "retail_export_oldest_pending_age_seconds",
            "Age of the oldest export item not yet delivered, by queue (0 when none).",
            labels=["account", "queue"],
        )
        for queue in selectors.export_backlog():
            backlog.add_metric([queue.account, queue.queue], queue.pending)
            oldest_age.add_metric([queue.account, queue.queue], queue.oldest_pending_age_seconds)
        yield backlog
        yield oldest_age

        breakers = GaugeMetricFamily(
            "retail_circuit_breakers",
            "Destinations' circuit breakers by state (open: calls fail fast; closed: some failures counted).",
            labels=["state"],
        )
        for state, n in selectors.circuit_breakers_by_state():
            breakers.add_metric([state], n)
        yield breakers
        paused = GaugeMetricFamily(
            "retail_export_paused_deliveries",
            "Export deliveries waiting for their destination's circuit breaker to reopen, by queue.",
            labels=["account", "queue"],
        )
        for account, queue_name, n in selectors.paused_export_deliveries():
            paused.add_metric([account, queue_name], n)
        yield paused
        disabled = GaugeMetricFamily(
            "retail_export_queue_disabled",
            "1 for an export queue the service disabled after EXPORT_QUEUE_DISABLE_AFTER_DAYS of failure.",
            labels=["account", "queue"],
        )
        for account, queue_name in selectors.disabled_export_queues():
            disabled.add_metric([account, queue_name], 1)
        yield disabled

        retries = GaugeMetricFamily(
            "retail_export_retries",
            "Delivery attempts after the first" + suffix + ", by queue and outcome.",
            labels=["account", "queue", "outcome"],
        )
        for account, queue_name, ok, n in selectors.export_retries(since=since):
            retries.add_metric([account, queue_name, _ok(ok)], n)
        yield retries

        yield _histogram(
            "retail_export_delivery_duration_seconds",
            "Export delivery attempt duration" + suffix + ", by outcome.",
            ["outcome"],
            selectors.delivery_latency(since=since),
        )
        yield _histogram(
            "retail_integration_call_duration_seconds",
            "Runtime integration call duration" + suffix + ", by kind and outcome.",
            ["kind", "outcome"],
            selectors.integration_latency(since=since),
        )


# Registered without describing (auto_describe off): registering must not query the database.
_BUSINESS = CollectorRegistry(auto_describe=False)
_BUSINESS.register(DatabaseCollector())


def render() -> bytes:
    """The text exposition: this process's (or all workers') request metrics, then the business metrics."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_BUSINESS)
