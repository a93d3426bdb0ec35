"""Prometheus metrics at ``/metrics`` (docs/operations.md, Observability).

Two kinds, on purpose:

- Request metrics (``http_requests_total``, ``http_request_duration_seconds``) are counted in the process that
  answers the request. With several gunicorn workers set ``PROMETHEUS_MULTIPROC_DIR`` (an empty directory, cleaned
  when the service starts) and prometheus-client's multiprocess mode adds them up across workers (a recycled
  worker's files are folded into one archive per kind: ``ops.multiproc``); without it each scrape sees the one
  worker that answered it.
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
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from ops import multiproc, selectors

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


def _gauge(name: str, documentation: str, labels: list[str], samples: Iterable[tuple[list[str], float]]) -> Metric:
    """A gauge family of (label values, value) samples."""
    family = GaugeMetricFamily(name, documentation, labels=labels)
    for values, value in samples:
        family.add_metric(values, value)
    return family


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
        """The business metrics by group, in exposition order; counts and latencies cover the window."""
        now = timezone.now()
        window = settings.METRICS_WINDOW_SECONDS
        since = now - timedelta(seconds=window)
        suffix = f" in the last METRICS_WINDOW_SECONDS ({window} s)"
        yield from _import_metrics(now=now, since=since, suffix=suffix)
        yield from _sale_metrics(since=since, suffix=suffix)
        yield from _export_metrics(since=since, suffix=suffix)
        yield from _delivery_health_metrics(since=since, suffix=suffix)
        yield from _latency_metrics(since=since, suffix=suffix)


# Each group below takes the window's start (``since``) and the text its documentation ends with (``suffix``).


def _import_metrics(*, now: datetime, since: datetime, suffix: str) -> Iterator[Metric]:
    """Import items queued in the window, and the backlog not yet materialised with its oldest item's age."""
    yield _gauge(
        "retail_import_items",
        "Import items queued" + suffix + ", by kind and status.",
        ["kind", "status"],
        (([kind, status], n) for kind, status, n in selectors.import_items_by_status(since=since)),
    )
    pending, oldest = selectors.import_backlog()
    yield GaugeMetricFamily("retail_import_backlog", "Import items queued, not yet materialised.", value=pending)
    yield GaugeMetricFamily(
        "retail_import_oldest_pending_age_seconds",
        "Age of the oldest import item not yet materialised (0 when none).",
        value=(now - oldest).total_seconds() if oldest else 0.0,
    )


def _sale_metrics(*, since: datetime, suffix: str) -> Iterator[Metric]:
    """Warnings on the checkouts stored as sent in the window."""
    yield _gauge(
        "retail_sale_warnings",
        "Warnings on checkouts stored as sent" + suffix + ", by account and code (docs/amounts.md).",
        ["account", "code"],
        (([account, code], n) for account, code, n in selectors.checkout_warnings_by_code(since=since)),
    )


def _export_metrics(*, since: datetime, suffix: str) -> Iterator[Metric]:
    """Export items created in the window, and the outbox per queue with its oldest item's age."""
    yield _gauge(
        "retail_export_items",
        "Export items created" + suffix + ", by account, queue and status.",
        ["account", "queue", "status"],
        (([account, queue, status], n) for account, queue, status, n in selectors.export_items_by_queue(since=since)),
    )
    backlog = list(selectors.export_backlog())
    yield _gauge(
        "retail_export_backlog",
        "Export items not yet delivered (the outbox), by queue.",
        ["account", "queue"],
        (([queue.account, queue.queue], queue.pending) for queue in backlog),
    )
    yield _gauge(
        "retail_export_oldest_pending_age_seconds",
        "Age of the oldest export item not yet delivered, by queue (0 when none).",
        ["account", "queue"],
        (([queue.account, queue.queue], queue.oldest_pending_age_seconds) for queue in backlog),
    )


def _delivery_health_metrics(*, since: datetime, suffix: str) -> Iterator[Metric]:
    """What holds deliveries back: circuit breakers, deliveries paused by them, disabled queues, and retries."""
    yield _gauge(
        "retail_circuit_breakers",
        "Destinations' circuit breakers by state (open: calls fail fast; closed: some failures counted).",
        ["state"],
        (([state], n) for state, n in selectors.circuit_breakers_by_state()),
    )
    yield _gauge(
        "retail_export_paused_deliveries",
        "Export deliveries waiting for their destination's circuit breaker to reopen, by queue.",
        ["account", "queue"],
        (([account, queue], n) for account, queue, n in selectors.paused_export_deliveries()),
    )
    yield _gauge(
        "retail_export_queue_disabled",
        "1 for an export queue the service disabled after EXPORT_QUEUE_DISABLE_AFTER_DAYS of failure.",
        ["account", "queue"],
        (([account, queue], 1) for account, queue in selectors.disabled_export_queues()),
    )
    yield _gauge(
        "retail_export_retries",
        "Delivery attempts after the first" + suffix + ", by queue and outcome.",
        ["account", "queue", "outcome"],
        (([account, queue, _ok(ok)], n) for account, queue, ok, n in selectors.export_retries(since=since)),
    )


def _latency_metrics(*, since: datetime, suffix: str) -> Iterator[Metric]:
    """Latency histograms of the export deliveries and the runtime integration calls in the window."""
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
        MultiProcessCollector(registry, path=settings.PROMETHEUS_MULTIPROC_DIR)
        # Not while the master folds a dead worker's files into the archive (ops.multiproc).
        with multiproc.locked(settings.PROMETHEUS_MULTIPROC_DIR, exclusive=False):
            request_metrics = generate_latest(registry)
    else:
        request_metrics = generate_latest(REGISTRY)
    return request_metrics + generate_latest(_BUSINESS)
